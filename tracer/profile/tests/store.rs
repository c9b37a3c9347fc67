//! Profiles through SQLite and back, views with hand-computed figures, diffs, the balance check,
//! and bad databases.

use timeless_profile::accumulate::{assemble, RankPart};
use timeless_profile::model::{RunMeta, Source};
use timeless_profile::naming::{Child, Event, Kind};
use timeless_profile::view::{self, Cell, Format};
use timeless_profile::{check, diff, store, Profile, StoreError};

fn meta(source: Source) -> RunMeta {
    RunMeta {
        source,
        program: "./ring 3".into(),
        ranks: 4,
        mpi_library: "Open MPI v4.1.4".into(),
        date: "2026-11-25T00:00:00Z".into(),
        notes: String::new(),
    }
}

/// 4 ranks; rank r's local 1 is the split half {0,1} or {2,3}.
/// * W: rank 0 sends 40,000 bytes to rank 1 twice (1 ms, 3 ms); rank 1 receives them (2 ms,
///   2 ms); every rank calls MPI_Allreduce of 8 bytes once (rank r takes (r+1) ms).
/// * the half {2,3}: rank 2 MPI_Bcast root, 100 bytes (contribution 0), rank 3 receives
///   (contribution 100), 5 ms each.
fn sample(scale: f64) -> Profile {
    let mut parts: Vec<RankPart> = (0..4).map(|_| RankPart::default()).collect();
    for (r, p) in parts.iter_mut().enumerate() {
        let half = if r < 2 { vec![0, 1] } else { vec![2, 3] };
        p.log.events.push(Event::Created {
            kind: Kind::Split,
            parent: 0,
            child: Some(Child {
                local: 1,
                members: half,
            }),
        });
        p.record(0, "MPI_Allreduce", 8, 0, scale * (r as f64 + 1.0) * 1e-3);
    }
    parts[0].record(0, "MPI_Send", 40_000, 0, 1e-3);
    parts[0].record(0, "MPI_Send", 40_000, 0, 3e-3);
    parts[1].record(0, "MPI_Recv", 0, 40_000, 2e-3);
    parts[1].record(0, "MPI_Recv", 0, 40_000, 2e-3);
    parts[2].record(1, "MPI_Bcast", 0, 0, 5e-3);
    parts[3].record(1, "MPI_Bcast", 100, 0, 5e-3);
    // Through the text each rank sends to rank 0.
    let parts: Vec<RankPart> = parts
        .iter()
        .map(|p| RankPart::decode(&p.encode(), 4).unwrap())
        .collect();
    assemble(meta(Source::Measured), &parts).unwrap()
}

#[test]
fn round_trip_and_views() {
    let p = sample(1.0);
    // split on W, everyone in 1 communicator: W_s1.0 and W_s1.2.
    let names: Vec<&str> = p.comms.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["W", "W_s1.0", "W_s1.2"]);
    // Each rank's local 1 is its half.
    let l: Vec<(u32, u32, &str)> = p
        .locals
        .iter()
        .map(|l| (l.rank, l.local, l.comm.as_str()))
        .collect();
    assert_eq!(
        l,
        [
            (0, 1, "W_s1.0"),
            (1, 1, "W_s1.0"),
            (2, 1, "W_s1.2"),
            (3, 1, "W_s1.2")
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prof.db");
    store::write(&db, &p).unwrap();
    // No temporary file left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let back = store::read(&db).unwrap();
    assert_eq!(back, p);

    // Rows: W allreduce x4 (bucket of 8 bytes = 4), W send (bucket 16), W recv, W_s1.2 bcast
    // x2 (root's bucket 0, rank 3's bucket 7 = [64, 128)).
    assert_eq!(p.rows.len(), 8);
    let send = p.rows.iter().find(|r| r.op == "MPI_Send").unwrap();
    assert_eq!(
        (send.bucket, send.stats.calls, send.stats.bytes_sent),
        (16, 2, 80_000)
    );
    assert_eq!(
        (
            send.stats.time_sum_secs,
            send.stats.time_min_secs,
            send.stats.time_max_secs
        ),
        (4e-3, 1e-3, 3e-3)
    );

    let ops = view::by_operation(&p);
    let allreduce = ops
        .rows
        .iter()
        .find(|r| r[1] == Cell::Text("MPI_Allreduce".into()))
        .unwrap();
    // Across ranks 1, 2, 3, 4 ms: min 1, avg 2.5, max 4, sum 10 ms; 4 calls, 32 bytes.
    assert_eq!(allreduce[2], Cell::Int(4));
    assert_eq!(allreduce[3], Cell::Int(32));
    let secs = |c: &Cell| match c {
        Cell::Secs(v) => *v,
        _ => panic!("{c:?}"),
    };
    assert!((secs(&allreduce[5]) - 1e-3).abs() < 1e-15);
    assert!((secs(&allreduce[6]) - 2.5e-3).abs() < 1e-15);
    assert!((secs(&allreduce[7]) - 4e-3).abs() < 1e-15);
    assert!((secs(&allreduce[8]) - 10e-3).abs() < 1e-15);

    let comms = view::by_communicator(&p);
    // W: calls 4 + 2 + 2 = 8; sent 32 + 80,000; received 80,000. W_s1.2: 2 calls, 100 bytes,
    // 5 ms on both members: min = avg = max = 5 ms, sum 10 ms. W_s1.0 has no rows.
    assert_eq!(comms.rows.len(), 2);
    assert_eq!(comms.rows[0][2], Cell::Int(8));
    assert_eq!(comms.rows[0][3], Cell::Int(80_032));
    assert_eq!(comms.rows[0][4], Cell::Int(80_000));
    assert_eq!(comms.rows[1][0], Cell::Text("W_s1.2".into()));
    assert_eq!(comms.rows[1][3], Cell::Int(100));
    assert!((secs(&comms.rows[1][8]) - 10e-3).abs() < 1e-15);

    let buckets = view::by_bucket(&p);
    // W's MPI_Send in [32 KiB, 64 KiB): 2 calls, all on rank 0 (4 ms): across W's 4 members
    // min 0, avg 1 ms, max 4 ms.
    let send = buckets
        .rows
        .iter()
        .find(|r| r[1] == Cell::Text("MPI_Send".into()))
        .unwrap();
    assert_eq!(send[2], Cell::Text("[32 KiB, 64 KiB)".into()));
    assert_eq!(send[3], Cell::Int(2));
    assert_eq!(send[6], Cell::Secs(0.0));
    assert!((secs(&send[7]) - 1e-3).abs() < 1e-15);
    assert!((secs(&send[8]) - 4e-3).abs() < 1e-15);

    // Output formats carry the same figures.
    let csv = view::render(std::slice::from_ref(&ops), Format::Csv);
    assert!(csv.contains("by operation,W,MPI_Allreduce,4,32,0,0.001000,0.002500,0.004000,0.010000"));
    let json: serde_json::Value =
        serde_json::from_str(&view::render(std::slice::from_ref(&ops), Format::Json)).unwrap();
    assert_eq!(json["by operation"][0]["calls"], 4);
    let text = view::render(&[ops], Format::Text);
    assert!(text.starts_with("== by operation =="));

    // Point-to-point balances on W.
    assert!(check::p2p_balance(&p).is_empty());
}

#[test]
fn balance_violation_is_reported() {
    let mut p = sample(1.0);
    p.rows.retain(|r| r.op != "MPI_Recv");
    let v = check::p2p_balance(&p);
    assert_eq!(v.len(), 1);
    assert_eq!(
        v[0].to_string(),
        "W: point-to-point sends 2 calls / 80000 bytes, receives 0 calls / 0 bytes"
    );
}

#[test]
fn diff_shows_where_time_moved() {
    let a = sample(1.0);
    let b = sample(3.0);
    // Only MPI_Allreduce times changed: 10 ms -> 30 ms, +20 ms, +200 %.
    let ch = diff::changes(&a, &b);
    assert_eq!(ch[0].comm, "W");
    assert_eq!(ch[0].op, "MPI_Allreduce");
    assert!((ch[0].delta_secs() - 20e-3).abs() < 1e-15);
    assert!(ch[1..].iter().all(|c| c.delta_secs() == 0.0));
    let t = diff::table(&ch);
    assert_eq!(t.rows[0][9], Cell::Text("+200.00".into()));
}

#[test]
fn bad_databases() {
    let dir = tempfile::tempdir().unwrap();
    // Not SQLite.
    let junk = dir.path().join("junk.db");
    std::fs::write(
        &junk,
        b"this is not a database, just some bytes long enough",
    )
    .unwrap();
    let e = store::read(&junk).unwrap_err();
    assert!(matches!(e, StoreError::NotAProfile { .. }), "{e}");
    assert!(e.to_string().contains("junk.db"));
    // Another SQLite database.
    let other = dir.path().join("other.db");
    rusqlite_free_db(&other);
    let e = store::read(&other).unwrap_err();
    assert!(e.to_string().contains("not a timeless profile"), "{e}");
    // Another schema version (user_version, header offset 60).
    let v2 = dir.path().join("v2.db");
    store::write(&v2, &sample(1.0)).unwrap();
    let mut b = std::fs::read(&v2).unwrap();
    b[60..64].copy_from_slice(&[0, 0, 0, 2]);
    std::fs::write(&v2, b).unwrap();
    let e = store::read(&v2).unwrap_err();
    assert!(
        matches!(
            e,
            StoreError::Version {
                found: 2,
                expected: 1,
                ..
            }
        ),
        "{e}"
    );
    // A missing file.
    assert!(matches!(
        store::read(&dir.path().join("none.db")),
        Err(StoreError::NotAProfile { .. })
    ));
    // A truncated profile.
    let good = dir.path().join("good.db");
    store::write(&good, &sample(1.0)).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    for cut in [100, 1000, bytes.len() / 2, bytes.len() - 1] {
        let t = dir.path().join(format!("cut{cut}.db"));
        std::fs::write(&t, &bytes[..cut]).unwrap();
        let r = store::read(&t);
        assert!(r.is_err(), "cut at {cut} read as a profile");
    }
    // Corrupted pages: any error, never a panic.
    for (i, at) in (0..bytes.len()).step_by(97).enumerate() {
        let mut b = bytes.clone();
        b[at] ^= 0x5a;
        let t = dir.path().join(format!("flip{i}.db"));
        std::fs::write(&t, &b).unwrap();
        let _ = store::read(&t);
    }
}

/// An SQLite file of another application, made through the store's own writer and then
/// stamped with another application id via a raw byte patch (offset 68 of the header).
fn rusqlite_free_db(path: &std::path::Path) {
    store::write(path, &sample(1.0)).unwrap();
    let mut b = std::fs::read(path).unwrap();
    b[68..72].copy_from_slice(&[0, 0, 0, 7]);
    std::fs::write(path, b).unwrap();
}
