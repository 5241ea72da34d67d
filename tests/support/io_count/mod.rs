//! Bytes a piece of code read, as the kernel counts them for the calling thread (`rchar` in
//! `/proc/thread-self/io`: every byte `read`/`pread` returned, page cache or not). A reader's
//! byte budget is then checked as an outcome instead of through wall time, which a loaded
//! runner stretches.

/// `f()` and the bytes this thread read while running it (the two small reads of the counter
/// itself included, so a caller's bound needs a few KiB of slack).
pub fn bytes_read<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = rchar();
    let out = f();
    (out, rchar().saturating_sub(before))
}

fn rchar() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
