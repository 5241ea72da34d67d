#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| intercom_pane_fuzz::session_timeline(data));
