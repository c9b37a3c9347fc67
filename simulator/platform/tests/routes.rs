//! Routes of small platforms, each checked against SimGrid 3.32 (the expected link lists and
//! latencies were produced by `tools/route_oracle.cpp` on the same files, and derived by hand
//! from the SimGrid sources where noted).
//! Latencies are compared exactly with the values SimGrid prints with `%.17g`.
#![allow(clippy::excessive_precision)]

mod common;

use common::*;
use timeless_platform::{PlatformError, SharingPolicy};

#[test]
fn figure5_cluster_v41() {
    let p = load("figure5_v41.xml");
    let names_of: Vec<&str> = p.hosts().iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        names_of,
        [
            "mycluster-0.mysite.fr",
            "mycluster-1.mysite.fr",
            "mycluster-2.mysite.fr",
            "mycluster-3.mysite.fr"
        ]
    );
    assert_eq!(
        p.host(host(&p, "mycluster-2.mysite.fr"))
            .speed_flops_per_sec,
        1.17e9
    );
    let r = route(&p, "mycluster-0.mysite.fr", "mycluster-1.mysite.fr");
    let expected = [
        "AS_mycluster_link_0_UP",
        "AS_mycluster_backbone",
        "AS_mycluster_link_1_DOWN",
    ];
    assert_eq!(
        names(&p, "mycluster-0.mysite.fr", "mycluster-1.mysite.fr"),
        expected
    );
    // SimGrid prints 5.0010000000000004e-05: the three latencies added in route order.
    assert_eq!(r.latency_secs, latency_sum(&p, &expected));
    assert_eq!(r.latency_secs, 5.0010000000000004e-05);
    assert!((r.latency_secs - 3.0 * 16.67e-6).abs() < 1e-18);
    let bb = p.link(p.link_by_name("AS_mycluster_backbone").unwrap());
    assert_eq!(bb.bandwidth_bytes_per_sec, 1.25e9);
    assert_eq!(bb.policy, SharingPolicy::Shared);
    assert_eq!(
        p.host_zone(host(&p, "mycluster-0.mysite.fr")),
        Some("AS_mycluster")
    );
    // No notice: a 4.1 file where every value has a unit.
    assert_eq!(p.notices().len(), 0, "{:?}", p.notices());
}

#[test]
fn figure5_cluster_v3_is_accepted_with_notices() {
    let p3 = load("figure5_v3.xml");
    let p41 = load("figure5_v41.xml");
    assert_eq!(p3.hosts(), p41.hosts());
    assert_eq!(p3.links(), p41.links());
    assert_eq!(
        route(&p3, "mycluster-0.mysite.fr", "mycluster-1.mysite.fr"),
        route(&p41, "mycluster-0.mysite.fr", "mycluster-1.mysite.fr")
    );
    let notices = p3.notices().join("\n");
    assert!(notices.contains("figure5_v3.xml:4: version 3"), "{notices}");
    assert!(notices.contains("'power' read as 'speed'"), "{notices}");
    assert!(notices.contains("unit-less value '1.25E8'"), "{notices}");
}

#[test]
fn p1_full_zone_and_loopback() {
    let p = load("p1.xml");
    let r = route(&p, "h0", "h1");
    assert_eq!(names(&p, "h0", "h1"), ["l"]);
    assert_eq!(r.latency_secs, 50.0 * 1e-6); // "50us" is 50 × 1e-6 = 4.9999999999999996e-05, not 50e-6
                                             // symmetrical by default
    assert_eq!(names(&p, "h1", "h0"), ["l"]);
    let l = p.link(p.link_by_name("l").unwrap());
    assert_eq!(l.bandwidth_bytes_per_sec, 125e6);
    assert_eq!(l.policy, SharingPolicy::Shared);
    // no self-route declared: the model's loopback (FATPIPE, 10 GB/s, 0 s)
    let self_route = route(&p, "h0", "h0");
    assert_eq!(self_route.links, [p.loopback_link()]);
    assert_eq!(self_route.latency_secs, 0.0);
    let lb = p.link(p.loopback_link());
    assert_eq!(lb.name, "__loopback__");
    assert_eq!(lb.policy, SharingPolicy::FatPipe);
    assert_eq!(lb.bandwidth_bytes_per_sec, 10e9);
    assert_eq!(p.host_prop(host(&p, "h1"), "smpi/os"), Some("0:1e-3:1e-6"));
    assert_eq!(p.host_prop(host(&p, "h0"), "smpi/os"), None);
}

#[test]
fn c4_cluster_routes() {
    let p = load("c4.xml");
    assert_eq!(p.hosts().len(), 4);
    assert_eq!(p.hosts()[3].name, "n-3.me");
    assert_eq!(
        names(&p, "n-0.me", "n-1.me"),
        ["c_link_0_UP", "c_backbone", "c_link_1_DOWN"]
    );
    assert_eq!(
        names(&p, "n-1.me", "n-0.me"),
        ["c_link_1_UP", "c_backbone", "c_link_0_DOWN"]
    );
    // same host without loopback: up, backbone, down
    assert_eq!(
        names(&p, "n-0.me", "n-0.me"),
        ["c_link_0_UP", "c_backbone", "c_link_0_DOWN"]
    );
    let r = route(&p, "n-0.me", "n-1.me");
    assert_eq!(r.latency_secs, 0.00060000000000000006); // SimGrid's sum 50us + 500us + 50us
    assert_eq!(
        p.link(p.link_by_name("c_backbone").unwrap())
            .bandwidth_bytes_per_sec,
        2.25e9
    );
    let up = p.link(p.link_by_name("c_link_2_UP").unwrap());
    assert_eq!(up.bandwidth_bytes_per_sec, 125e6);
    assert_eq!(up.latency_secs, 50.0 * 1e-6);
    assert_eq!(up.policy, SharingPolicy::Shared);
}

fn c4_variant(extra: &str) -> timeless_platform::Platform {
    load_str(&platform(&format!(
        "<cluster id=\"c\" prefix=\"n-\" suffix=\".me\" radical=\"0-3\" speed=\"1Gf\" bw=\"125MBps\" lat=\"50us\" bb_bw=\"2.25GBps\" bb_lat=\"500us\" {extra}/>"
    )))
}

#[test]
fn cluster_shared_and_fatpipe_private_links_are_shared() {
    for policy in ["SHARED", "FATPIPE"] {
        let p = c4_variant(&format!("sharing_policy=\"{policy}\""));
        assert_eq!(
            names(&p, "n-0.me", "n-1.me"),
            ["c_link_0", "c_backbone", "c_link_1"]
        );
        // the down list repeats c_link_0, which a star route adds only once
        assert_eq!(names(&p, "n-0.me", "n-0.me"), ["c_link_0", "c_backbone"]);
        // SimGrid quirk: sharing_policy="FATPIPE" on <cluster> gives SHARED private links
        assert_eq!(
            p.link(p.link_by_name("c_link_0").unwrap()).policy,
            SharingPolicy::Shared
        );
    }
    let p = c4_variant("bb_sharing_policy=\"FATPIPE\"");
    assert_eq!(
        p.link(p.link_by_name("c_backbone").unwrap()).policy,
        SharingPolicy::FatPipe
    );
}

#[test]
fn cluster_loopback_limiter_router() {
    let p = c4_variant(
        "loopback_bw=\"1GBps\" loopback_lat=\"1us\" limiter_link=\"100MBps\" router_id=\"gw\"",
    );
    assert_eq!(names(&p, "n-0.me", "n-0.me"), ["c_link_0_loopback"]);
    assert_eq!(route(&p, "n-0.me", "n-0.me").latency_secs, 1e-6);
    assert_eq!(
        p.link(p.link_by_name("c_link_0_loopback").unwrap()).policy,
        SharingPolicy::FatPipe
    );
    assert_eq!(
        names(&p, "n-0.me", "n-1.me"),
        [
            "c_link_0_limiter",
            "c_link_0_UP",
            "c_backbone",
            "c_link_1_DOWN",
            "c_link_1_limiter"
        ]
    );
    let lim = p.link(p.link_by_name("c_link_1_limiter").unwrap());
    assert_eq!(
        (lim.bandwidth_bytes_per_sec, lim.latency_secs),
        (100e6, 0.0)
    );
    // the default router name would be n-c_router.me
    let p = c4_variant("");
    assert!(p.links().iter().all(|l| !l.name.contains("limiter")));
}

#[test]
fn default_router_name_collision_is_an_error() {
    let err = load_err(&platform(
        "<zone id=\"w\" routing=\"Full\">\n<zone id=\"z\" routing=\"Full\"><host id=\"n-c_router.me\" speed=\"1f\"/></zone>\n<cluster id=\"c\" prefix=\"n-\" suffix=\".me\" radical=\"0-1\" speed=\"1Gf\" bw=\"1Bps\" lat=\"0\"/>\n</zone>",
    ));
    assert!(err.contains("bad.xml:6:"), "{err}");
    assert!(
        err.contains("'n-c_router.me' is declared several times"),
        "{err}"
    );
}

#[test]
fn cluster_without_backbone() {
    let p = load_str(&platform(
        "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0,5\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>",
    ));
    assert!(p.link_by_name("c_backbone").is_none());
    assert_eq!(names(&p, "n0", "n5"), ["c_link_0_UP", "c_link_5_DOWN"]);
}

#[test]
fn split_duplex_directions_and_symmetrical_reverse() {
    let p = load("splitduplex.xml");
    assert!(p.link_by_name("sd").is_none());
    assert_eq!(
        p.link(p.link_by_name("sd_UP").unwrap()).policy,
        SharingPolicy::Shared
    );
    assert_eq!(
        p.link(p.link_by_name("fp").unwrap()).policy,
        SharingPolicy::FatPipe
    );
    assert_eq!(names(&p, "h0", "h1"), ["sd_UP"]);
    assert_eq!(names(&p, "h1", "h0"), ["sd_DOWN"]);
    // the reverse route: links reversed, UP and DOWN swapped
    assert_eq!(names(&p, "h0", "h2"), ["a", "sd_DOWN", "fp"]);
    assert_eq!(names(&p, "h2", "h0"), ["fp", "sd_UP", "a"]);
    assert_eq!(route(&p, "h2", "h0").latency_secs, 5.9999999999999995e-05);
    // a half named explicitly, not symmetrical: no way back
    assert_eq!(names(&p, "h1", "h2"), ["sd_UP"]);
    let back = p.route_or_empty(host(&p, "h2"), host(&p, "h1")).unwrap();
    assert!(back.links.is_empty());
    match p.route(host(&p, "h2"), host(&p, "h1")) {
        Err(PlatformError::NoRoute { src, dst, .. }) => {
            assert_eq!((src.as_str(), dst.as_str()), ("h2", "h1"))
        }
        other => panic!("{other:?}"),
    }
}

fn shortest(routing: &str) -> timeless_platform::Platform {
    let text = std::fs::read_to_string(data("shortest.xml")).unwrap();
    load_str(&text.replace("ROUTING", routing))
}

#[test]
fn floyd_shortest_paths() {
    let p = shortest("Floyd");
    // r0 → r2 in two one-link hops beats the declared three-link route; of the two two-hop
    // ways (through r1 or r3) Floyd keeps the one found first.
    assert_eq!(names(&p, "a", "b"), ["la", "l01", "l12", "lb"]);
    assert_eq!(names(&p, "b", "a"), ["lb", "l12", "l01", "la"]);
    assert_eq!(names(&p, "c", "a"), ["c1", "c2", "l30", "la"]);
    assert_eq!(names(&p, "a", "c"), ["la", "l30", "c2", "c1"]);
    assert_eq!(route(&p, "a", "c").latency_secs, 4.1299999999999994e-05);
    assert_eq!(names(&p, "a", "a"), ["__loopback__"]);
}

#[test]
fn dijkstra_shortest_paths_reverse_multi_link_edges() {
    let p = shortest("Dijkstra");
    assert_eq!(names(&p, "a", "b"), ["la", "l01", "l12", "lb"]);
    // SimGrid 3.32's insert_link_latency inserts each edge's links reversed at the front:
    // the two-link edge c → r3 = [c1, c2] comes out as [c2, c1].
    assert_eq!(names(&p, "c", "a"), ["c2", "c1", "l30", "la"]);
    assert_eq!(names(&p, "a", "c"), ["la", "l30", "c1", "c2"]);
    assert_eq!(route(&p, "a", "c").latency_secs, 4.1299999999999994e-05);
    assert_eq!(names(&p, "c", "c"), ["__loopback__"]);
    let q = shortest("DijkstraCache");
    assert_eq!(names(&q, "c", "b"), ["c2", "c1", "l23", "lb"]);
}

#[test]
fn zone_route_and_bypass() {
    let p = load("zones.xml");
    assert_eq!(names(&p, "l0", "r1"), ["l0_gw", "wan_UP", "r1_gw"]);
    assert_eq!(names(&p, "r0", "l1"), ["r0_gw", "wan_DOWN", "l1_gw"]);
    // The zone-level latency (wan) is summed first, then l0_gw, then r0_gw.
    assert_eq!(route(&p, "l0", "r0").latency_secs, 0.010003999999999999);
    // bypass inside "right"
    assert_eq!(names(&p, "r0", "r1"), ["fast"]);
    assert_eq!(names(&p, "r1", "r0"), ["r1_gw", "r0_gw"]);
    // the Full zone "left" has no route between its hosts: empty, hence an error
    assert!(matches!(
        p.route(host(&p, "l0"), host(&p, "l1")),
        Err(PlatformError::NoRoute { .. })
    ));
    // the root has sub-zones, so it has no loopback, but the leaf zones do
    assert_eq!(names(&p, "l0", "l0"), ["__loopback__"]);
}

#[test]
fn torus_routes() {
    let p = load("topologies.xml");
    // 3×3 torus, node r at (r mod 3, r div 3). Each node owns, per dimension, the link to its
    // right neighbour, t_link_from_<r>_to_<next>, split in _UP/_DOWN (SPLITDUPLEX default).
    // 0 → 4 = (1,1): right in x through 0's own link UP, then right in y through 1's link UP.
    assert_eq!(
        names(&p, "t-0", "t-4"),
        ["t_link_from_0_to_1_UP", "t_link_from_1_to_4_UP"]
    );
    // 0 → 8 = (2,2): target 2 is not within +3/2 = 1 step to the right, so go left (wrap):
    // to node 2 through node 2's link 2→0 DOWN, then in y from 2 to 8 through 8's link 8→2 DOWN.
    assert_eq!(
        names(&p, "t-0", "t-8"),
        ["t_link_from_2_to_0_DOWN", "t_link_from_8_to_2_DOWN"]
    );
    assert_eq!(route(&p, "t-0", "t-8").latency_secs, 2e-6);
    // no loopback in a torus without loopback_bw: an empty route, an error for a message
    assert!(p
        .route_or_empty(host(&p, "t-0"), host(&p, "t-0"))
        .unwrap()
        .links
        .is_empty());
}

#[test]
fn fat_tree_route() {
    let p = load("topologies.xml");
    // "2;2,2;1,2;1,1": 4 leaves (ids 0..3), level-1 switches 7, 6 and level-2 switches 5, 4
    // (ids count down from 2×4). Labels: leaves [0,0] [1,0] [0,1] [1,1], switches 7 [0,0],
    // 6 [0,1], 5 [0,0], 4 [0,1]. Cables, numbered in creation order: 0–7 #0, 1–7 #1, 2–6 #2,
    // 3–6 #3, 7–5 #4, 7–4 #5, 6–5 #6, 6–4 #7 (named link_from_<child>_<parent>_<n>).
    // 0 → 3: up from leaf 0 to switch 7 (its only parent), up again through parent port
    // (3 / 1) mod 2 = 1, i.e. switch 4, which contains leaf 3; down the children whose port
    // index matches leaf 3's label: switch 6 (port 1), then leaf 3.
    assert_eq!(
        names(&p, "f-0", "f-3"),
        [
            "link_from_0_7_0_UP",
            "link_from_7_4_5_UP",
            "link_from_6_4_7_DOWN",
            "link_from_3_6_3_DOWN"
        ]
    );
    assert_eq!(
        names(&p, "f-3", "f-0"),
        [
            "link_from_3_6_3_UP",
            "link_from_6_5_6_UP",
            "link_from_7_5_4_DOWN",
            "link_from_0_7_0_DOWN"
        ]
    );
    assert_eq!(
        names(&p, "f-0", "f-0"),
        ["link_from_0_7_0_UP", "link_from_0_7_0_DOWN"]
    );
}

#[test]
fn dragonfly_route() {
    let p = load("topologies.xml");
    // "2,1;1,1;2,1;1": 2 groups × 1 chassis × 2 routers × 1 node; routers 0..3 =
    // (group, blade) (0,0) (0,1) (1,0) (1,1). Links get a global counter: local links 0..3,
    // green links 4 (group 0) and 5 (group 1), blue link 6 between router 1 (group 0) and
    // router 2 (group 1). d-0 → d-3: up to router 0, green to blade 1 = target group, blue to
    // router (group 1, blade 0 = source group), green to blade 1, down to the node.
    assert_eq!(
        names(&p, "d-0", "d-3"),
        [
            "local_link_from_router_0_to_node_0_0_UP",
            "green_link_in_chassis_0_between_routers_0_and_1_4_UP",
            "blue_link_between_group_0_and_1_routers_1_and_2_6_UP",
            "green_link_in_chassis_0_between_routers_0_and_1_5_UP",
            "local_link_from_router_3_to_node_0_3_DOWN",
        ]
    );
    assert_eq!(route(&p, "d-0", "d-3").latency_secs, 1.5e-05);
    assert_eq!(
        names(&p, "d-1", "d-0"),
        [
            "local_link_from_router_1_to_node_0_1_UP",
            "green_link_in_chassis_0_between_routers_0_and_1_4_DOWN",
            "local_link_from_router_0_to_node_0_0_DOWN",
        ]
    );
    // zones without a zoneRoute between them: SimGrid's "Bad gateways"
    let err = p
        .route(host(&p, "d-0"), host(&p, "f-0"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Bad gateways"), "{err}");
}

#[test]
fn cluster_zone_with_host_links_and_cabinet() {
    let p = load_str(&platform(
        r#"<zone id="w" routing="Cluster">
  <host id="a" speed="1Gf"/>
  <host id="b" speed="1Gf"/>
  <link id="la" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
  <link id="lb" bandwidth="1GBps" latency="2us"/>
  <backbone id="bb" bandwidth="10GBps" latency="3us"/>
  <host_link id="a" up="la_UP" down="la_DOWN"/>
  <host_link id="b" up="lb" down="lb"/>
  <cabinet id="cab" prefix="k" suffix="" radical="0-1" speed="2Gf" bw="1GBps" lat="4us"/>
</zone>"#,
    ));
    assert_eq!(names(&p, "a", "b"), ["la_UP", "bb", "lb"]);
    assert_eq!(names(&p, "b", "a"), ["lb", "bb", "la_DOWN"]);
    assert_eq!(names(&p, "k0", "a"), ["link_k0_UP", "bb", "la_DOWN"]);
    assert_eq!(names(&p, "a", "a"), ["la_UP", "bb", "la_DOWN"]);
    assert_eq!(p.host(host(&p, "k1")).speed_flops_per_sec, 2e9);
}

#[test]
fn small_platform_like_full_zone() {
    // The shape of SimGrid's examples/platforms/small_platform.xml (written anew here):
    // multi-link routes in a Full zone, one FATPIPE link, symmetrical by default.
    let p = load_str(&platform(
        r#"<zone id="zone0" routing="Full">
  <host id="Tremblay" speed="98.095Mf"/>
  <host id="Jupiter" speed="76.296Mf"/>
  <host id="Fafard" speed="76.296Mf"/>
  <link id="6" bandwidth="41.279125MBps" latency="59.904us"/>
  <link id="3" bandwidth="34.285625MBps" latency="514.433us"/>
  <link id="loopback" bandwidth="498MBps" latency="15us" sharing_policy="FATPIPE"/>
  <route src="Tremblay" dst="Jupiter"><link_ctn id="6"/><link_ctn id="3"/></route>
  <route src="Fafard" dst="Fafard"><link_ctn id="loopback"/></route>
</zone>"#,
    ));
    assert_eq!(names(&p, "Tremblay", "Jupiter"), ["6", "3"]);
    assert_eq!(names(&p, "Jupiter", "Tremblay"), ["3", "6"]);
    assert_eq!(names(&p, "Fafard", "Fafard"), ["loopback"]);
    assert_eq!(names(&p, "Jupiter", "Jupiter"), ["__loopback__"]);
    assert_eq!(p.host(host(&p, "Tremblay")).speed_flops_per_sec, 98.095e6);
}

#[test]
fn pstates_cores_and_props() {
    let p = load_str(&platform(
        r#"<zone id="z" routing="Full">
  <host id="h" speed="1Gf, 2Gf,3Gf" pstate="1" core="4">
    <prop id="k" value="first"/>
    <prop id="k" value="second"/>
    <prop id="smpi/or" value="1:2:3"/>
  </host>
</zone>"#,
    ));
    let h = p.host(host(&p, "h"));
    assert_eq!(h.speed_flops_per_sec, 2e9);
    assert_eq!(h.cores, 4);
    assert_eq!(
        h.props,
        [
            ("k".to_string(), "first".to_string()),
            ("smpi/or".to_string(), "1:2:3".to_string())
        ]
    );
}

#[test]
fn config_props_are_returned() {
    let p = load_str(&platform(
        r#"<config id="General">
  <prop id="smpi/bw-factor" value="0:1"/>
  <prop id="network/crosstraffic" value="0"/>
</config>
<zone id="z" routing="Full"><host id="h" speed="1Gf"/></zone>"#,
    ));
    assert_eq!(
        p.config(),
        [
            ("smpi/bw-factor".to_string(), "0:1".to_string()),
            ("network/crosstraffic".to_string(), "0".to_string())
        ]
    );
}

#[test]
fn link_without_latency_defaults_to_zero_with_a_notice() {
    let p = load_str(&platform(
        "<zone id=\"z\" routing=\"Full\">\n<host id=\"h\" speed=\"1Gf\"/>\n<link id=\"l\" bandwidth=\"1GBps\"/>\n</zone>",
    ));
    assert_eq!(p.link(p.link_by_name("l").unwrap()).latency_secs, 0.0);
    assert!(
        p.notices()
            .iter()
            .any(|n| n.starts_with("inline.xml:6: link l has no latency")),
        "{:?}",
        p.notices()
    );
}

#[test]
fn route_answers_are_stable_and_do_not_mutate() {
    let p = shortest("Dijkstra");
    let first = route(&p, "c", "b");
    for _ in 0..3 {
        assert_eq!(route(&p, "c", "b"), first);
    }
    let q = p.clone();
    assert_eq!(route(&q, "c", "b"), first);
}
