//! libFuzzer wrapper of the `trace_text` target (timeless_fuzz::targets).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let target = timeless_fuzz::find("trace_text").expect("target exists");
    let _ = (target.run)(data);
});
