//! Platform descriptions: SimGrid platform and deployment XML, smpirun hostfiles.

use timeless_platform::{deployment, HostId, Platform};

use super::{msg, p1};
use crate::Outcome;

/// Elements and attributes of SimGrid's platform DTD.
pub(crate) const WORDS: &[&str] = &[
    "<platform version=\"4.1\">", "</platform>", "<zone id=\"z\" routing=\"Full\">", "</zone>",
    "routing=\"Floyd\"", "routing=\"Dijkstra\"", "routing=\"DijkstraCache\"", "routing=\"None\"",
    "<host id=\"h2\" speed=\"1Gf\"/>", "speed=\"1Gf,2Gf\"", "core=\"4\"", "pstate=\"1\"",
    "<link id=\"l2\" bandwidth=\"1GBps\" latency=\"1us\"/>", "sharing_policy=\"FATPIPE\"",
    "sharing_policy=\"SPLITDUPLEX\"", "<route src=\"h0\" dst=\"h1\">", "</route>",
    "<link_ctn id=\"l\"/>", "direction=\"UP\"", "symmetrical=\"NO\"",
    "<cluster id=\"c\" prefix=\"c-\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>",
    "radical=\"0-99999999\"", "topology=\"FAT_TREE\"", "topo_parameters=\"2;2,2;1,2;1,1\"",
    "topology=\"TORUS\"", "topo_parameters=\"2,2,2\"", "topology=\"DRAGONFLY\"",
    "topo_parameters=\"1,1;1,1;1,1;1\"", "<backbone id=\"b\" bandwidth=\"1GBps\" latency=\"1us\"/>",
    "<router id=\"r\"/>", "<zoneRoute src=\"a\" dst=\"b\" gw_src=\"r\" gw_dst=\"r\">",
    "<prop id=\"k\" value=\"v\"/>", "<config><prop id=\"network/model\" value=\"SMPI\"/></config>",
    "<include file=\"x.xml\"/>", "<!DOCTYPE platform>", "<!-- c -->", "<![CDATA[x]]>", "&amp;",
    "&#0;", "Gf", "MBps", "Gbps", "ms", "us", "ns", "ps", "kf", "Ef", "TiBps",
];

/// Elements of the deployment DTD.
pub(crate) const DEPLOY_WORDS: &[&str] = &[
    "<platform version=\"4.1\">",
    "</platform>",
    "<actor host=\"h0\" function=\"0\">",
    "<actor host=\"h1\" function=\"1\"/>",
    "</actor>",
    "<argument value=\"rank-0.txt\"/>",
    "<prop id=\"instance_id\" value=\"j\"/>",
    "<prop id=\"rank\" value=\"1\"/>",
    "function=\"",
    "<process host=\"h0\" function=\"0\"/>",
];

/// A platform; an accepted one must route between each pair of its first eight hosts.
pub(crate) fn platform(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let p = Platform::from_xml(&text, "platform.xml", &Default::default()).map_err(msg)?;
    let n = p.hosts().len().min(8) as u32;
    for a in 0..n {
        for b in 0..n {
            let _ = p.route_or_empty(HostId(a), HostId(b));
        }
    }
    Ok(())
}

/// A deployment on P1.
pub(crate) fn deployment(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    deployment::from_xml(&text, "deployment.xml", &p1())
        .map(|_| ())
        .map_err(msg)
}

/// A hostfile on P1, with the default rank count and with 5 ranks.
pub(crate) fn hostfile(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let p = p1();
    deployment::from_hostfile_text(&text, "hostfile", &p, None).map_err(msg)?;
    deployment::from_hostfile_text(&text, "hostfile", &p, Some(5))
        .map(|_| ())
        .map_err(msg)
}
