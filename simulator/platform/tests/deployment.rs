//! Deployment files, hostfiles and the default placement.

mod common;

use common::*;
use timeless_platform::deployment::{self, Placement};
use timeless_platform::PlatformError;

#[test]
fn v3_process_deployment_with_arguments() {
    let p = load("figure5_v3.xml");
    let d = deployment::from_file(&data("figure6_v3_deployment.xml"), &p).unwrap();
    let hosts: Vec<&str> = d
        .ranks
        .iter()
        .map(|r| p.host(r.host).name.as_str())
        .collect();
    // functions p0..p3 are ranks, whatever the order of the file
    assert_eq!(
        hosts,
        [
            "mycluster-0.mysite.fr",
            "mycluster-1.mysite.fr",
            "mycluster-2.mysite.fr",
            "mycluster-3.mysite.fr"
        ]
    );
    assert_eq!(d.ranks[0].args, ["SG_process0.trace", "extra"]);
    assert_eq!(d.ranks[2].args, ["SG_process2.trace"]);
    assert!(d.ranks[3].args.is_empty());
}

#[test]
fn named_functions_take_file_order() {
    let p = load("p1.xml");
    let text = r#"<?xml version='1.0'?>
<platform version="4.1">
  <actor host="h1" function="smpi_replay"><argument value="1"/><prop id="x" value="y"/></actor>
  <actor host="h0" function="0"/>
</platform>"#;
    let d = deployment::from_xml(text, "d.xml", &p).unwrap();
    assert_eq!(
        d.ranks,
        [
            Placement {
                host: host(&p, "h1"),
                args: vec!["1".to_string()]
            },
            Placement {
                host: host(&p, "h0"),
                args: vec![]
            },
        ]
    );
}

#[test]
fn deployment_errors_name_the_line() {
    let p = load("p1.xml");
    let unknown = "<platform version=\"4.1\">\n<actor host=\"h0\" function=\"0\"/>\n<actor host=\"h9\" function=\"1\"/>\n</platform>";
    let err = deployment::from_xml(unknown, "d.xml", &p).unwrap_err();
    assert!(
        matches!(err, PlatformError::UnknownName { line: 3, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("d.xml:3: host 'h9' does not exist"),
        "{err}"
    );
    let dup = "<platform version=\"4.1\">\n<actor host=\"h0\" function=\"p0\"/>\n<actor host=\"h1\" function=\"p0\"/>\n</platform>";
    let err = deployment::from_xml(dup, "d.xml", &p)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("d.xml:3: rank 0 is deployed twice (first at line 2)"),
        "{err}"
    );
    let gap = "<platform version=\"4.1\">\n<actor host=\"h0\" function=\"p0\"/>\n<actor host=\"h1\" function=\"p2\"/>\n</platform>";
    let err = deployment::from_xml(gap, "d.xml", &p)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("d.xml:3: actor rank 2 is out of range"),
        "{err}"
    );
}

#[test]
fn hostfile_with_counts() {
    let p = load("c4.xml");
    let d = deployment::from_hostfile_text("n-1.me:2\nn-3.me\n", "hf", &p, None).unwrap();
    let hosts: Vec<&str> = d
        .ranks
        .iter()
        .map(|r| p.host(r.host).name.as_str())
        .collect();
    assert_eq!(hosts, ["n-1.me", "n-1.me", "n-3.me"]);
    // more ranks than lines: round-robin
    let d = deployment::from_hostfile_text("n-1.me:2\nn-3.me\n", "hf", &p, Some(5)).unwrap();
    let hosts: Vec<&str> = d
        .ranks
        .iter()
        .map(|r| p.host(r.host).name.as_str())
        .collect();
    assert_eq!(hosts, ["n-1.me", "n-1.me", "n-3.me", "n-1.me", "n-1.me"]);
}

#[test]
fn hostfile_lines_are_not_trimmed() {
    let p = load("c4.xml");
    let err = deployment::from_hostfile_text("n-0.me\n\nn-1.me \n", "hf", &p, None).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("hf:3: host 'n-1.me ' does not exist"),
        "{err}"
    );
    let d = deployment::from_hostfile_text("n-0.me\n\nn-2.me", "hf", &p, Some(1)).unwrap();
    assert_eq!(d.ranks.len(), 1);
}

#[test]
fn default_placement_sorts_names_lexicographically() {
    let p = load_str(&platform(
        "<cluster id=\"c\" prefix=\"n-\" suffix=\"\" radical=\"0-11\" speed=\"1Gf\" bw=\"1GBps\" lat=\"0\"/>",
    ));
    let d = deployment::default_for(&p, 4);
    let hosts: Vec<&str> = d
        .ranks
        .iter()
        .map(|r| p.host(r.host).name.as_str())
        .collect();
    assert_eq!(hosts, ["n-0", "n-1", "n-10", "n-11"]);
    let d = deployment::default_for(&p, 14);
    // 12 hosts: rank 13 wraps to the second name in order
    assert_eq!(p.host(d.ranks[13].host).name, "n-1");
}
