fn main() {
    std::process::exit(intercom_pane::main_entry());
}
