fn main() {
    println!("intercom-pane {}", env!("CARGO_PKG_VERSION"));
}
