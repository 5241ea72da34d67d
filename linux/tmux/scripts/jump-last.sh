#!/usr/bin/env bash
# Go to the pane of the seat that alerted last: `intercom-pane jump --last --from <pane>`, where
# <pane> ($1, `%N`) is the pane the key was pressed in (its client is the one moved). The jump
# checks that the seat's pane still runs the pi it alerted from, and says why not otherwise.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/literal.sh"

from="${1:-}"
is_pane_id "$from" || { tmux display-message "intercom-pane: the jump key got no pane id"; exit 1; }
option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}
bin="$(option @intercom-pane-bin intercom-pane)"
config="$(option @intercom-pane-config '')"
args=(jump --last --from "$from")
[ -n "$config" ] && args+=(--config "$config")
if ! out="$("$bin" "${args[@]}" 2>&1)"; then
    # The message is data: `display-message` expands and draws it, so `#` and `%` are doubled.
    msg="${out//$'\n'/ }"
    msg="${msg//#/##}"
    tmux_literal "intercom-pane: $msg"
    tmux display-message "${REPLY//%/%%}"
    exit 1
fi
