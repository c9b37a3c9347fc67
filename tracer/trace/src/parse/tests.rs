use super::*;
use proptest::prelude::*;

proptest! {
    /// The digits fast path of integer fields decodes what nom decodes and rejects what it
    /// rejects: ranks (u32, `p` prefix or not) and tags (i32), over digit strings of any
    /// length (overflow included), signed and malformed tokens.
    #[test]
    fn integer_fast_path_agrees_with_nom(tok in "[-+p]?[0-9]{1,21}|[0-9a-z+-]{0,4}") {
        let nom_rank = {
            let (digits, dialect) = match tok.strip_prefix('p') {
                Some(rest) => (rest, Dialect::Seed),
                None => (tok.as_str(), Dialect::SimGrid),
            };
            all_consuming(uint32::<_, ()>)(digits).map(|(_, r)| (r, dialect)).ok()
        };
        prop_assert_eq!(rank_field(&tok).ok(), nom_rank);
        let nom_tag = all_consuming(int64::<_, ()>)(tok.as_str())
            .ok()
            .and_then(|(_, v)| i32::try_from(v).ok());
        let line = format!("0 send 1 {tok} 10");
        let ours = match parse_line(&line, 4) {
            Ok(Some(Record { action: Action::Send { tag, .. }, .. })) => Some(tag),
            _ => None,
        };
        prop_assert_eq!(ours, nom_tag);
    }

    /// The line scans' fast paths agree with the standard library: `trim` with `str::trim`
    /// and `last_blank` with `rfind([' ', '\t'])`, over lines mixing ASCII, tabs, newlines,
    /// control bytes, DEL and Unicode white space (U+00A0, U+2003, U+3000) at either end.
    #[test]
    fn line_scans_agree_with_std(line in "[ \t\r\n\x0b\x7fa-z0-9=@\u{a0}\u{2003}\u{3000}é]{0,12}") {
        prop_assert_eq!(trim(&line), line.trim());
        prop_assert_eq!(last_blank(&line), line.rfind([' ', '\t']));
    }

    /// Splitting on bytes above the space with one comparison gives the fields of the exact
    /// separator test (space, tab, CR, LF), control bytes and DEL staying inside fields.
    #[test]
    fn fields_split_on_the_four_separators(line in "[ \t\r\n\x01\x0b\x1f\x7fa-z0-9é]{0,16}") {
        let expected: Vec<&str> = line
            .split([' ', '\t', '\r', '\n'])
            .filter(|f| !f.is_empty())
            .collect();
        prop_assert_eq!(fields(&line).collect::<Vec<_>>(), expected);
    }
}

fn one(line: &str) -> Action {
    parse_line(line, 4).unwrap().unwrap().action
}

fn err(line: &str) -> String {
    parse_line(line, 4).unwrap_err().to_string()
}

#[test]
fn simgrid_point_to_point() {
    assert_eq!(
        one("0 send 1 0 1e6"),
        Action::Send {
            dst: 1,
            tag: 0,
            count: 1_000_000,
            dt: None,
            blocking: true
        }
    );
    assert_eq!(
        one("  2\tirecv 3 7 1000 1  "),
        Action::Recv {
            src: 3,
            tag: 7,
            count: RecvCount::Count(1000),
            dt: Some(Datatype(1)),
            blocking: false
        }
    );
    assert_eq!(
        one("1 recv 0 0 -1"),
        Action::Recv {
            src: 0,
            tag: 0,
            count: RecvCount::Probe,
            dt: None,
            blocking: true
        }
    );
    assert_eq!(
        one("1 wait 0 1 5"),
        Action::Wait(RequestKey::Key {
            src: 0,
            dst: 1,
            tag: 5
        })
    );
    // trunc(strtod): 2.9 elements read as 2.
    assert!(matches!(
        one("0 isend 1 0 2.9"),
        Action::Send { count: 2, .. }
    ));
}

#[test]
fn simgrid_collectives_with_optional_fields() {
    assert_eq!(
        one("0 bcast 5 2 0"),
        Action::Bcast {
            count: 5,
            root: 2,
            dt: Some(Datatype::DOUBLE)
        }
    );
    assert_eq!(
        one("0 bcast 5"),
        Action::Bcast {
            count: 5,
            root: 0,
            dt: None
        }
    );
    assert_eq!(
        one("3 reducescatter 1 2 3 4 1e3 0"),
        Action::ReduceScatter {
            recv_counts: vec![1, 2, 3, 4].into(),
            flops: 1e3,
            dt: Some(Datatype::DOUBLE)
        }
    );
    assert_eq!(
        one("0 alltoallv 10 1 2 3 4 10 4 3 2 1"),
        Action::AllToAllV {
            send_counts: vec![1, 2, 3, 4].into(),
            recv_counts: vec![4, 3, 2, 1].into(),
            send_dt: None,
            recv_dt: None
        }
    );
    // allgatherv with sdt rdt disps[4] (N + 2 trailing fields)
    assert_eq!(
        one("1 allgatherv 2 2 2 2 2 1 1 0 2 4 6"),
        Action::AllGatherV {
            send_count: 2,
            recv_counts: vec![2; 4].into(),
            send_dt: Some(Datatype(1)),
            recv_dt: Some(Datatype(1)),
            disps: vec![0, 2, 4, 6].into()
        }
    );
    assert_eq!(
        one("0 sendRecv 1000 1 1000 1 6 6"),
        Action::SendRecv {
            send_count: 1000,
            dst: 1,
            recv_count: 1000,
            src: 1,
            send_dt: Some(Datatype::BYTE),
            recv_dt: Some(Datatype::BYTE)
        }
    );
    assert_eq!(
        one("0 init 0"),
        Action::Init {
            double_default: true
        }
    );
    assert_eq!(
        one("0 init"),
        Action::Init {
            double_default: false
        }
    );
}

#[test]
fn seed_format() {
    let r = parse_line("p0 send p1 1e6", 4).unwrap().unwrap();
    assert_eq!((r.rank, r.dialect), (0, Dialect::Seed));
    assert_eq!(
        r.action,
        Action::Send {
            dst: 1,
            tag: 0,
            count: 1_000_000,
            dt: Some(Datatype::BYTE),
            blocking: true
        }
    );
    assert!(matches!(
        one("p0 recv p3"),
        Action::Recv {
            src: 3,
            count: RecvCount::FromSender,
            ..
        }
    ));
    assert!(matches!(
        one("p1 allReduce 1e3 5e5"),
        Action::AllReduce { count: 1000, .. }
    ));
    assert_eq!(one("p1 wait"), Action::Wait(RequestKey::Oldest));
}

#[test]
fn blank_and_comment_lines() {
    assert_eq!(parse_line("   ", 4).unwrap(), None);
    assert_eq!(parse_line("# hello", 4).unwrap(), None);
}

#[test]
fn errors_say_what_was_expected() {
    assert!(err("0 sendrecv 1 1 1 1 6 6").contains("unknown action 'sendrecv'"));
    assert!(err("0 send 1 0").contains("missing field <count>"));
    assert!(err("0 send 1 0 abc").contains("<count> must be a finite number, found 'abc'"));
    assert!(err("0 send 9 0 10").contains("<dst> must be a rank in 0..4, found 9"));
    assert!(err("0 send 1 0 10 99").contains("unknown datatype id '99'"));
    assert!(err("0 wait").contains("missing field <src>"));
    assert!(err("0 sendRecv 1 1 1 1").contains("missing field <send datatype>"));
    assert!(err("x send 1 0 10").contains("bad rank field 'x'"));
    assert!(err("0 compute 1e6 7").contains("unexpected extra field '7'"));
    assert!(err("0 compute -5").contains("must be >= 0"));
    assert!(err("0 compute inf").contains("finite"));
}
