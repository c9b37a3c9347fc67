//! `Action::is_collective` says which parsed actions involve every rank of their communicator
//! (the replay charges `timeless/cold-call-secs` to those after a long burst).

use timeless_trace::parse_line;

fn collective(line: &str) -> bool {
    parse_line(line, 4)
        .expect("a valid line")
        .expect("an action")
        .action
        .is_collective()
}

#[test]
fn collectives_and_the_rest() {
    for line in [
        "0 barrier",
        "0 bcast 100 0",
        "0 allreduce 8 1e3",
        "0 reduce 8 1e3 0",
        "0 alltoall 10 10",
        "0 alltoallv 40 10 10 10 10 40 10 10 10 10",
        "0 allgatherv 10 10 10 10 10",
        "0 reducescatter 10 10 10 10 1e3",
    ] {
        assert!(collective(line), "{line}");
    }
    for line in [
        "0 init",
        "0 comm_def 1 2 0 2",
        "0 compute 1e6",
        "0 send 1 0 10000",
        "0 irecv 3 0 10000",
        "0 wait 1 0 0",
        "0 waitall",
        "0 sendRecv 8 1 8 2 0 0",
        "0 finalize",
    ] {
        assert!(!collective(line), "{line}");
    }
}
