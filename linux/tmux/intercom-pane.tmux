#!/usr/bin/env bash
# intercom-pane tmux plugin (TPM-compatible; tmux >= 3.2).
#
# With TPM, in ~/.tmux.conf:   set -g @plugin '<git url or path of intercom-pane>/linux/tmux'
# By hand (no TPM):            run-shell /path/to/intercom-pane/linux/tmux/intercom-pane.tmux
#
# Options (set them before the plugin loads):
#   @intercom-pane-key        prefix key: to the sidebar and back (also after its (default: M)
#                             Enter went to a worker), or open one above (never a second one)
#   @intercom-pane-popup-key  prefix key that opens the sidebar in a popup        (default: m)
#   @intercom-pane-bin        the intercom-pane program                           (default: intercom-pane)
#   @intercom-pane-size       height of a new sidebar pane     (default: 25%, at least 7 lines)
#   @intercom-pane-focus-events  on: turn tmux's focus-events on, so the sidebar  (default: on)
#                             shows whether it has the keyboard; off: leave it
#   @intercom-pane-extended-keys on: turn tmux's extended-keys on (and on tmux 3.5+ (default: on)
#                             extended-keys-format csi-u), as pi asks in every pane
#                             (its docs/tmux.md); off: leave them
#   @intercom-pane-restore    on: when the tmux server starts, bring the roster   (default: off)
#                             of @intercom-pane-restore-root back on it
#                             (`intercom-pane restore`; scripts/restore.sh)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

option() {
    local v
    v="$(tmux show-option -gqv "$1")"
    printf '%s' "${v:-$2}"
}

key="$(option @intercom-pane-key M)"
popup_key="$(option @intercom-pane-popup-key m)"
bin="$(option @intercom-pane-bin intercom-pane)"

# The sidebar shows whether it has the keyboard from the terminal's focus reports, which tmux
# passes to panes only with its server option focus-events on.
if [ "$(option @intercom-pane-focus-events on)" = on ]; then
    tmux set-option -s focus-events on
fi

# pi tells Shift+Enter from Enter only with tmux's extended keys, and warns in every pane
# without them. tmux before 3.5 has no extended-keys-format (pi then reads xterm's
# modifyOtherKeys), so that one may fail quietly.
if [ "$(option @intercom-pane-extended-keys on)" = on ]; then
    tmux set-option -s extended-keys on
    tmux set-option -s extended-keys-format csi-u 2>/dev/null || true
fi

# The pane key is a script: it finds this window's sidebar (or the session's), goes there and
# back, and learns a new pane's id to mark and title it (as `intercom-pane ensure-monitor`
# does), which a plain key binding cannot. Its shell line holds the script's own location (in
# single quotes for sh; `#` kept for tmux, which format-expands a run-shell line), the pane
# id (`%N`) and the client's name quoted for sh (`q:`; the script checks it is listed), nothing
# else: the script asks tmux for the pane's folder.
. "$HERE/scripts/literal.sh"
script="$HERE/scripts/open-pane.sh"
tmux_literal "'${script//\'/\'\\\'\'}'"
tmux bind-key "$key" run-shell -b "$REPLY #{pane_id} #{q:client_name}"
# The sidebar's Enter names this key where the person lands (a plain key name only).
tmux set-option -g @intercom-pane-back-key "$key"
# display-popup -d expands `#{pane_current_path}` once: the folder itself, never read as a format.
tmux_arg "$bin"
tmux bind-key "$popup_key" display-popup -E -w 90% -h 60% -d "#{pane_current_path}" -- "$REPLY" monitor
# Restore at the server's start, when asked (scripts/restore.sh; it returns at once).
"$HERE/scripts/restore.sh"
# Alerts: the status line's summary and the key to the seat that alerted last (scripts/alerts.sh).
"$HERE/scripts/alerts.sh"
