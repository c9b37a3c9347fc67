use super::*;

fn sizes(c: CommId) -> Option<u32> {
    (c == 3).then_some(2)
}

#[test]
fn comm_def_and_comm_fields() {
    let r = parse_line("1 comm_def 3 2 2 1", 4).unwrap().unwrap();
    assert_eq!(
        r.action,
        Action::CommDef {
            id: 3,
            world_ranks: vec![2, 1].into()
        }
    );
    assert_eq!(r.comm, WORLD);
    let r = parse_line_in("1 isend 2 7 10 comm=3", 4, &sizes)
        .unwrap()
        .unwrap();
    assert_eq!(r.comm, 3);
    assert!(matches!(
        r.action,
        Action::Send {
            dst: 2,
            tag: 7,
            count: 10,
            ..
        }
    ));
    // Count vectors have the communicator's size: 2 entries, not 4.
    let r = parse_line_in("1 gatherv 5 5 6 2 comm=3", 4, &sizes)
        .unwrap()
        .unwrap();
    match r.action {
        Action::GatherV {
            recv_counts, root, ..
        } => {
            assert_eq!(*recv_counts, vec![5, 6]);
            assert_eq!(root, 2);
        }
        other => panic!("{other:?}"),
    }
    // comm=0 is the world, vectors have 4 entries.
    let r = parse_line_in("1 reducescatter 1 1 1 1 8 comm=0", 4, &sizes)
        .unwrap()
        .unwrap();
    assert_eq!(r.comm, WORLD);
}

#[test]
fn comm_errors_say_what_was_expected() {
    let e = |l: &str| parse_line_in(l, 4, &sizes).unwrap_err().to_string();
    assert!(e("1 send 2 0 10 comm=5").contains("comm 5 is not"));
    assert!(e("1 send 2 0 10 comm=x").contains("communicator id"));
    assert!(e("1 compute 10 comm=3").contains("no comm= field"));
    assert!(e("1 comm_def 0 1 1").contains(">= 1"));
    assert!(e("1 comm_def 2 2 1 1").contains("distinct"));
    assert!(e("1 comm_def 2 2 1").contains("w_1"));
    assert!(e("1 comm_def 2 5 0 1 2 3 0").contains("1..=4"));
    assert!(e("1 gatherv 5 5 5 2 0 6 7 comm=3").contains("extra field"));
}

#[test]
fn call_site_field_is_carried_after_comm() {
    let r = parse_line_in("1 isend 2 7 10 6 comm=3 @cs=4000000000", 4, &sizes)
        .unwrap()
        .unwrap();
    assert_eq!((r.comm, r.callsite), (3, Some(4_000_000_000)));
    assert!(matches!(
        r.action,
        Action::Send {
            dst: 2,
            count: 10,
            ..
        }
    ));
    let r = parse_line("0 barrier @cs=17", 2).unwrap().unwrap();
    assert_eq!(
        (r.action, r.comm, r.callsite),
        (Action::Barrier, WORLD, Some(17))
    );
    let r = parse_line("0 barrier", 2).unwrap().unwrap();
    assert_eq!(r.callsite, None);
    let e = |l: &str| parse_line_in(l, 4, &sizes).unwrap_err().to_string();
    assert!(e("1 send 2 0 10 @cs=x").contains("a call-site id (0..2^32), found '@cs=x'"));
    assert!(e("1 send 2 0 10 @cs=-1").contains("found '@cs=-1'"));
    assert!(e("1 send 2 0 10 @cs=4294967296").contains("call-site id"));
    assert!(e("1 compute 10 @cs=3").contains("no @cs= field"));
    assert!(e("p1 send p2 10 @cs=3").contains("no @cs= field"));
    // The call site comes last.
    assert!(e("1 send 2 0 10 6 @cs=3 comm=3").contains("extra field '@cs=3'"));
}
