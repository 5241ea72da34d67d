#!/usr/bin/env bash
# TPM looks for *.tmux at the top of a plugin's repository: `set -g @plugin '<this repo>'` loads
# the plugin kept in linux/tmux (see linux/README.md for its options).
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/linux/tmux/intercom-pane.tmux"
