# Sourced by the plugin's scripts (bash): the one rule for data in a tmux argument that tmux
# format-expands, the same as src/mux/tmux/literal.rs (see there why): `#(cmd)` in such an
# argument would run cmd, `#S` or `#{...}` would change the value.

# REPLY := the text tmux's format expansion turns back into exactly $1: each run of `#` doubled,
# unless a `[` follows it (tmux keeps `#[` and `##[` as they are, for its styles). The result is
# left in REPLY, not printed, so a trailing newline survives.
tmux_literal() {
    local s=$1 out="" head run
    while [ -n "$s" ]; do
        head=${s%%#*}
        if [ "$head" = "$s" ]; then out+=$s; break; fi
        out+=$head; s=${s#"$head"}
        run=${s%%[!#]*}; s=${s#"$run"}
        if [ "${s:0:1}" = "[" ]; then out+=$run; else out+=$run$run; fi
    done
    REPLY=$out
}

# Whether $1 is a tmux pane id (% and 1 to 9 digits): the only target the scripts accept.
is_pane_id() { [[ $1 =~ ^%[0-9]{1,9}$ ]]; }

# REPLY := $1 as one argv element for tmux: an element ending in `;` would end the command, so
# that `;` is escaped (as `escape_arg` does in src/mux/tmux/args.rs).
tmux_arg() {
    case "$1" in
        *\;) REPLY="${1%;}\\;" ;;
        *) REPLY=$1 ;;
    esac
}
