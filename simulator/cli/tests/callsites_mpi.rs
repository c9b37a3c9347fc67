//! Call sites (`timeless trace --callsites`): a C program sending the same message from two
//! source lines and a Fortran one, traced; the two sends get two ids, the table names the right
//! file and lines (found by the programs' `SITE` markers), the flow graph has a node per site,
//! and the text → compressed → text round trip keeps the field.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

use common::mpi::{root, text, timeless};
use timeless_trace::callsites::{parse_table, CallSite};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("callsites-mpi")
}

fn trace(program: &str, args: &[&str]) -> PathBuf {
    let exe = common::mpi::programs(&tmp()).join(program);
    let dir = tmp().join(program);
    let o = common::mpi::trace_into(&exe, args, 4, &dir, &["--callsites"]);
    assert!(o.contains("call sites: "), "{o}");
    dir
}

/// Line number (1-based) of the source line holding `SITE <name>` (word-exact).
fn site_line(source: &str, name: &str) -> u32 {
    let text = std::fs::read_to_string(root().join("validation/programs").join(source)).unwrap();
    let hits: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            l.split("SITE ")
                .nth(1)
                .is_some_and(|rest| rest.split_whitespace().next() == Some(name))
        })
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(hits.len(), 1, "one SITE {name} marker in {source}");
    hits[0]
}

fn table(dir: &Path) -> BTreeMap<u32, CallSite> {
    let p = dir.join("callsites.txt");
    parse_table(&std::fs::read_to_string(&p).unwrap(), &p)
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s))
        .collect()
}

/// Call-site ids of rank `r`'s lines whose action is `keyword`.
fn ids(dir: &Path, r: u32, keyword: &str) -> BTreeSet<u32> {
    std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
        .unwrap()
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(keyword))
        .map(|l| {
            let cs = l.rsplit(' ').next().unwrap();
            cs.strip_prefix("@cs=")
                .unwrap_or_else(|| panic!("no call site on '{l}'"))
                .parse()
                .unwrap()
        })
        .collect()
}

/// (function, source file name, line) of each id.
fn where_(t: &BTreeMap<u32, CallSite>, ids: &BTreeSet<u32>) -> BTreeSet<(String, String, u32)> {
    ids.iter()
        .map(|id| {
            let s = &t[id];
            let file = Path::new(s.file.as_deref().unwrap_or("-"))
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (s.function.clone().unwrap_or_default(), file, s.line)
        })
        .collect()
}

#[test]
fn two_send_sites_get_two_ids_with_their_lines() {
    if !common::mpi::have_mpi("call site") {
        return;
    }
    let dir = trace("callsites", &["5"]);
    let t = table(&dir);
    let src = "callsites.c";
    let line = |n| site_line(src, n);
    let f = |func: &str, l: u32| (func.to_string(), src.to_string(), l);
    for r in [0, 2] {
        let sends = ids(&dir, r, "send");
        assert_eq!(sends.len(), 2, "rank {r}: two send sites");
        assert_eq!(
            where_(&t, &sends),
            BTreeSet::from([f("main", line("A")), f("send_b", line("B"))])
        );
    }
    // Same code, same ids on every rank, whatever the address-space layout.
    assert_eq!(ids(&dir, 0, "send"), ids(&dir, 2, "send"));
    // The wildcard irecv keeps its post's site although its line is written at completion.
    let irecv = ids(&dir, 1, "irecv");
    assert_eq!(
        where_(&t, &irecv),
        BTreeSet::from([f("main", line("IRECV"))])
    );
    assert_eq!(
        where_(&t, &ids(&dir, 1, "wait")),
        BTreeSet::from([f("main", line("WAIT"))])
    );
    assert_eq!(
        where_(&t, &ids(&dir, 3, "recv")),
        BTreeSet::from([f("main", line("RECV"))])
    );
    assert_eq!(
        where_(&t, &ids(&dir, 0, "barrier")),
        BTreeSet::from([f("main", line("BARRIER"))])
    );
    for s in t.values() {
        assert!(s.module.ends_with("/callsites"), "{s:?}");
    }

    // Flow graph: the two sends are two nodes, labelled with their sites.
    let json = dir.join("g.json");
    let out = timeless(&[
        "flowgraph",
        dir.join("trace-list.txt").to_str().unwrap(),
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    let g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let graph0 = g["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["ranks"].as_array().unwrap().contains(&0.into()))
        .unwrap();
    let send_labels: BTreeSet<String> = graph0["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["label"].as_str().unwrap().to_string())
        .filter(|l| l.starts_with("send "))
        .collect();
    assert_eq!(
        send_labels,
        BTreeSet::from([
            format!("send 1 1 8 0 @ main (callsites.c:{})", line("A")),
            format!("send 1 1 8 0 @ send_b (callsites.c:{})", line("B")),
        ])
    );

    // Text -> compressed -> text keeps every action line, call sites included.
    let tlg = dir.join("t.tlg");
    let back = dir.join("back");
    for args in [
        vec![
            "compress",
            dir.join("trace-list.txt").to_str().unwrap(),
            "-o",
            tlg.to_str().unwrap(),
            "--precision",
            "0",
        ],
        vec![
            "decompress",
            tlg.to_str().unwrap(),
            "-o",
            back.to_str().unwrap(),
        ],
    ] {
        let out = timeless(&args);
        assert!(out.status.success(), "{:?}", text(&out));
    }
    for r in 0..4 {
        let actions = |p: PathBuf| -> Vec<String> {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            actions(back.join(format!("rank{r}.txt"))),
            actions(dir.join(format!("rank-{r}.txt"))),
            "rank {r}"
        );
    }
    assert_eq!(table(&back), t, "the table travels in the compressed file");
}

#[test]
fn fortran_send_sites_get_their_lines() {
    if !common::mpi::have_mpi("call site") {
        return;
    }
    let dir = trace("callsites_f", &[]);
    let t = table(&dir);
    let src = "callsites_f.f90";
    let sends = ids(&dir, 0, "send");
    assert_eq!(sends.len(), 2);
    let lines: BTreeSet<u32> = where_(&t, &sends)
        .into_iter()
        .map(|(_, file, l)| {
            assert_eq!(file, src);
            l
        })
        .collect();
    assert_eq!(
        lines,
        BTreeSet::from([site_line(src, "FA"), site_line(src, "FB")])
    );
}
