//! The `@cs=<id>` field read from files: carried on the events, bad values located at file:line.

use timeless_trace::TraceSource;

#[test]
fn a_rank_file_carries_call_sites_and_locates_bad_ones() {
    let dir = std::env::temp_dir().join(format!("timeless-cs-field-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("rank-0.txt");
    std::fs::write(
        &p,
        "0 init\n0 send 1 0 8 6 @cs=12\n0 compute 100\n0 send 1 0 8 6 @cs=99\n0 send 1 0 8 6 @cs=1x\n",
    )
    .unwrap();
    let src = TraceSource::PerRank(vec![p.clone()]);
    let mut r = src.open_rank(0, 2).unwrap();
    let mut got = Vec::new();
    let err = loop {
        match r.next_event() {
            Ok(Some(e)) => got.push((e.action.keyword(), e.callsite, e.location)),
            Ok(None) => panic!("the bad line must fail"),
            Err(e) => break e.to_string(),
        }
    };
    assert_eq!(
        got,
        vec![
            ("init", None, 1),
            ("send", Some(12), 2),
            ("compute", None, 3),
            ("send", Some(99), 4)
        ]
    );
    assert!(
        err.starts_with(&format!("{}:5: ", p.display())),
        "error names file:line: {err}"
    );
    assert!(err.contains("found '@cs=1x'"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
