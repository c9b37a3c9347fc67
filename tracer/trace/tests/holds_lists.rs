//! `Action::holds_lists` says which parsed actions own heap lists (the replay forgets the
//! others instead of dropping them).

use timeless_trace::parse_line;

fn holds(line: &str) -> bool {
    parse_line(line, 4)
        .expect("a valid line")
        .expect("an action")
        .action
        .holds_lists()
}

#[test]
fn lists_only_in_comm_def_and_v_collectives() {
    // Each of these carries per-rank counts or members (SimGrid 3.32's formats).
    for line in [
        "0 comm_def 1 2 0 2",
        "0 alltoallv 40 10 10 10 10 40 10 10 10 10",
        "0 gatherv 10 10 10 10 10 0",
        "0 allgatherv 10 10 10 10 10",
        "0 scatterv 10 10 10 10 10 0",
        "0 reducescatter 10 10 10 10 1e3",
    ] {
        assert!(holds(line), "{line}");
    }
    for line in [
        "0 init",
        "0 compute 1e6",
        "0 send 1 0 10000",
        "0 irecv 3 0 10000",
        "0 waitall",
        "0 allreduce 8 1e3",
        "0 alltoall 10 10",
        "0 bcast 100 0",
        "0 barrier",
        "0 finalize",
    ] {
        assert!(!holds(line), "{line}");
    }
}
