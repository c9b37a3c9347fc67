//! Errors name the file, the line, and what was expected.

mod common;

use common::*;
use timeless_platform::{Platform, PlatformError, PlatformOptions};

fn zone(body: &str) -> String {
    platform(&format!(
        "<zone id=\"z\" routing=\"Full\">\n{body}\n</zone>"
    ))
}

#[test]
fn unknown_unit_names_file_line_and_units() {
    // line 1 xml, 2 doctype, 3 platform, 4 zone, 5 host, 6 link
    let err = load_err(&zone(
        "<host id=\"h\" speed=\"1Gf\"/>\n<link id=\"l\" bandwidth=\"1KBps\" latency=\"0\"/>",
    ));
    assert!(
        err.starts_with("bad.xml:6: bandwidth of link l '1KBps': unknown unit 'KBps'"),
        "{err}"
    );
    assert!(err.contains("kBps"), "{err}");
    let err = load_err(&zone("<host id=\"h\" speed=\"1 Gf\"/>"));
    assert!(
        err.starts_with("bad.xml:5: speed of host h '1 Gf': unknown unit ' Gf'"),
        "{err}"
    );
    let err = load_err(&zone("<host id=\"h\" speed=\"fast\"/>"));
    assert!(
        err.starts_with("bad.xml:5: speed of host h 'fast': cannot parse a number"),
        "{err}"
    );
}

#[test]
fn unknown_names_in_routes() {
    let body = "<host id=\"h0\" speed=\"1Gf\"/>\n<host id=\"h1\" speed=\"1Gf\"/>\n<link id=\"l\" bandwidth=\"1GBps\" latency=\"0\"/>\n<link id=\"s\" bandwidth=\"1GBps\" latency=\"0\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    let err = load_err(&zone(&format!(
        "{body}<route src=\"h0\" dst=\"hX\"><link_ctn id=\"l\"/></route>"
    )));
    assert!(
        err.starts_with("bad.xml:9: node 'hX' does not exist"),
        "{err}"
    );
    let err = load_err(&zone(&format!(
        "{body}<route src=\"h0\" dst=\"h1\">\n<link_ctn id=\"nope\"/></route>"
    )));
    assert!(
        err.starts_with("bad.xml:10: link 'nope' does not exist"),
        "{err}"
    );
    let err = load_err(&zone(&format!(
        "{body}<route src=\"h0\" dst=\"h1\">\n<link_ctn id=\"s\"/></route>"
    )));
    assert!(err.contains("direction=\"UP\""), "{err}");
    let err = load_err(&zone(&format!(
        "{body}<route src=\"h0\" dst=\"h1\">\n<link_ctn id=\"l\" direction=\"UP\"/></route>"
    )));
    assert!(
        err.starts_with("bad.xml:10: split-duplex link (upward) 'l' does not exist"),
        "{err}"
    );
}

#[test]
fn duplicates() {
    let err = load_err(&zone(
        "<host id=\"h\" speed=\"1Gf\"/>\n<host id=\"h\" speed=\"1Gf\"/>",
    ));
    assert!(
        err.starts_with("bad.xml:6: host 'h' is declared several times"),
        "{err}"
    );
    let err = load_err(&zone("<link id=\"l_UP\" bandwidth=\"1Bps\" latency=\"0\"/>\n<link id=\"l\" bandwidth=\"1Bps\" latency=\"0\" sharing_policy=\"SPLITDUPLEX\"/>"));
    assert!(
        err.starts_with("bad.xml:6: link 'l_UP' is declared several times"),
        "{err}"
    );
    let routes = "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n<link id=\"l\" bandwidth=\"1Bps\" latency=\"0\"/>\n<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n<route src=\"b\" dst=\"a\"><link_ctn id=\"l\"/></route>";
    let err = load_err(&zone(routes));
    assert!(
        err.starts_with("bad.xml:9: The route between b and a already exists"),
        "{err}"
    );
}

#[test]
fn missing_route_names_both_hosts() {
    let p = load_str(&zone(
        "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>",
    ));
    let err = p.route(host(&p, "a"), host(&p, "b")).unwrap_err();
    assert!(matches!(&err, PlatformError::NoRoute { src, dst, .. } if src == "a" && dst == "b"));
    assert!(
        err.to_string()
            .starts_with("no route from host 'a' to host 'b'"),
        "{err}"
    );
    let p = load_str(&platform("<zone id=\"z\" routing=\"Floyd\">\n<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n</zone>"));
    let err = p
        .route(host(&p, "a"), host(&p, "b"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("No route from 'a' to 'b'"), "{err}");
    let p = load_str(&platform(
        "<zone id=\"z\" routing=\"None\">\n<host id=\"a\" speed=\"1Gf\"/>\n</zone>",
    ));
    let err = p
        .route(host(&p, "a"), host(&p, "a"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Empty zone"), "{err}");
}

#[test]
fn routing_kinds_and_versions() {
    let err = load_err(&platform("<zone id=\"z\" routing=\"Fast\"/>"));
    assert!(
        err.starts_with("bad.xml:4: zone 'z': unknown routing 'Fast'"),
        "{err}"
    );
    load_str(&platform("<zone id=\"z\" routing=\"fUlL\"/>"));
    let err = load_err("<platform version=\"4.2\">\n</platform>");
    assert!(
        err.starts_with("bad.xml:1: platform version 4.2 is too new"),
        "{err}"
    );
    let err = load_err("<platform>\n</platform>");
    assert!(err.contains("too old"), "{err}");
    let p = load_str("<platform version=\"4\"><zone id=\"z\" routing=\"Full\"/></platform>");
    assert_eq!(p.notices().len(), 1);
    let err = load_err(&platform("<zone id=\"z\" routing=\"Vivaldi\"/>"));
    assert!(err.contains("not supported"), "{err}");
}

#[test]
fn attributes_and_elements_are_checked() {
    let err = load_err(&zone("<host id=\"h\" speed=\"1Gf\" sped=\"2\"/>"));
    assert!(
        err.starts_with("bad.xml:5: <host> has no attribute 'sped'"),
        "{err}"
    );
    let err = load_err(&zone("<host id=\"h\" speed=\"1Gf\" power=\"2\"/>"));
    assert!(err.contains("no attribute 'power'"), "{err}");
    let err = load_err(&zone("<host id=\"h\"/>"));
    assert!(
        err.starts_with("bad.xml:5: <host> needs the attribute 'speed'"),
        "{err}"
    );
    let err = load_err(&zone(
        "<link id=\"l\" bandwidth=\"1Bps\" latency=\"0\" sharing_policy=\"HALFDUPLEX\"/>",
    ));
    assert!(
        err.starts_with("bad.xml:5: <link sharing_policy=\"HALFDUPLEX\">: expected SHARED"),
        "{err}"
    );
    let err = load_err(&zone("<hots id=\"h\" speed=\"1Gf\"/>"));
    assert!(
        err.starts_with("bad.xml:5: unexpected element <hots> inside <zone>"),
        "{err}"
    );
    let err = load_err(&zone(
        "<host id=\"h\" speed=\"1Gf\"/>\n<zone id=\"y\" routing=\"Full\"/>",
    ));
    assert!(err.starts_with("bad.xml:6: <zone> cannot appear"), "{err}");
}

#[test]
fn malformed_xml_names_the_line() {
    let err = load_err("<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n<host id=\"h\" speed=\"1Gf\">\n</zone>\n</platform>");
    assert!(err.starts_with("bad.xml:4: malformed XML"), "{err}");
}

#[test]
fn io_error_names_the_file() {
    let err = Platform::from_file(
        std::path::Path::new("/nonexistent/p.xml"),
        &PlatformOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("/nonexistent/p.xml: cannot read the file"),
        "{err}"
    );
}

#[test]
fn routes_must_follow_components() {
    let err = load_err(&zone("<host id=\"a\" speed=\"1Gf\"/>\n<link id=\"l\" bandwidth=\"1Bps\" latency=\"0\"/>\n<route src=\"a\" dst=\"a\" symmetrical=\"NO\"><link_ctn id=\"l\"/></route>\n<host id=\"b\" speed=\"1Gf\"/>"));
    assert!(
        err.starts_with("bad.xml:8: <host> must come before the routes"),
        "{err}"
    );
}

#[test]
fn host_routes_are_refused_in_zones_with_sub_zones() {
    let err = load_err(&platform(
        "<zone id=\"w\" routing=\"Full\">\n<zone id=\"a\" routing=\"Full\"><host id=\"h\" speed=\"1f\"/></zone>\n<link id=\"l\" bandwidth=\"1Bps\" latency=\"0\"/>\n<zoneRoute src=\"a\" dst=\"a\" gw_src=\"h\" gw_dst=\"h\"><link_ctn id=\"l\"/></zoneRoute>\n</zone>",
    ));
    assert!(err.contains("zoneRoute from 'h' to itself"), "{err}");
}

#[test]
fn zone_route_gateways_must_belong_to_their_zones() {
    let err = load_err(&platform(
        "<zone id=\"w\" routing=\"Full\">\n<zone id=\"a\" routing=\"Full\"><host id=\"ha\" speed=\"1f\"/></zone>\n<zone id=\"b\" routing=\"Full\"><host id=\"hb\" speed=\"1f\"/></zone>\n<link id=\"l\" bandwidth=\"1Bps\" latency=\"0\"/>\n<zoneRoute src=\"a\" dst=\"b\" gw_src=\"hb\" gw_dst=\"hb\"><link_ctn id=\"l\"/></zoneRoute>\n</zone>",
    ));
    assert!(err.starts_with("bad.xml:8:"), "{err}");
}
