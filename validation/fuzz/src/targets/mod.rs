//! The targets, one per kind of user file. Each takes arbitrary bytes and returns `Ok` or the
//! error's message; text formats get the bytes as they are where the library reads bytes, and
//! through `String::from_utf8_lossy` where it takes text (what its file reader does).

mod inputs;
mod platform;
mod trace;

use crate::Target;

/// Every target.
pub const ALL: &[Target] = &[
    Target {
        name: "trace_text",
        about: "TI text trace (shared file or list of rank files), replayed on a 2-host platform and compressed",
        run: trace::text,
        dictionary: trace::WORDS,
    },
    Target {
        name: "tlg",
        about: "compressed trace (.tlg): decoded, written back, every rank streamed",
        run: trace::tlg,
        dictionary: &["TLG", "\u{0}\u{0}\u{0}\u{0}", "\u{ff}\u{ff}\u{ff}\u{ff}"],
    },
    Target {
        name: "timed",
        about: "timed trace lines (timeless trace --timestamps) and trace-meta.json",
        run: trace::timed,
        dictionary: trace::TIMED_WORDS,
    },
    Target {
        name: "callsites",
        about: "call-site table (callsites.txt)",
        run: trace::callsites,
        dictionary: &["\t", "0x", "main", "ring.c", "??"],
    },
    Target {
        name: "platform_xml",
        about: "SimGrid platform XML, then routes between its first hosts",
        run: platform::platform,
        dictionary: platform::WORDS,
    },
    Target {
        name: "deployment_xml",
        about: "SimGrid deployment XML on a 2-host platform",
        run: platform::deployment,
        dictionary: platform::DEPLOY_WORDS,
    },
    Target {
        name: "hostfile",
        about: "smpirun hostfile on a 2-host platform",
        run: platform::hostfile,
        dictionary: &["h0", "h1", ":", "#", "\n"],
    },
    Target {
        name: "flowgraph",
        about: "event flow graph file (.tfg), then every rank's trace rebuilt",
        run: inputs::flowgraph,
        dictionary: &["TFG", "\u{0}\u{0}\u{0}\u{0}", "\u{ff}\u{ff}\u{ff}\u{ff}"],
    },
    Target {
        name: "profile_db",
        about: "communicator-centric profile (SQLite profile.db of trace --profile / simulate --profile)",
        run: inputs::profile_db,
        dictionary: &["SQLite format 3\u{0}", "\u{0}\u{0}\u{0}\u{0}", "\u{ff}\u{ff}"],
    },
    Target {
        name: "calibrate_csv",
        about: "ping-pong measurements CSV, then the network calibration fit",
        run: inputs::calibrate_csv,
        dictionary: inputs::CSV_WORDS,
    },
    Target {
        name: "calibrate_skampi",
        about: "SKaMPI Pingpong_Send_Recv output, then the network calibration fit",
        run: inputs::calibrate_skampi,
        dictionary: inputs::SKAMPI_WORDS,
    },
    Target {
        name: "sweep_toml",
        about: "sweep study file (TOML)",
        run: inputs::sweep,
        dictionary: inputs::SWEEP_WORDS,
    },
    Target {
        name: "cfg",
        about: "--cfg-file lines (KEY:VALUE), as timeless calibrate writes them",
        run: inputs::cfg,
        dictionary: inputs::CFG_WORDS,
    },
    Target {
        name: "jobs",
        about: "multi-job description (replay_multiple)",
        run: inputs::jobs,
        dictionary: &["job", "trace-list.txt", " 2 ", " 1e9"],
    },
    Target {
        name: "validate_cases",
        about: "timeless validate cases file",
        run: inputs::cases,
        dictionary: &["np=", "fold=", "--", "ring", " 4 "],
    },
];

/// A directory for the targets that read files, one per thread, kept for the process.
pub(crate) fn scratch() -> std::path::PathBuf {
    thread_local! {
        static DIR: tempfile::TempDir = tempfile::tempdir().expect("a temporary directory");
    }
    DIR.with(|d| d.path().to_path_buf())
}

/// The reference's platform P1: two 1 Gflop/s hosts `h0`, `h1`, one link.
pub(crate) const P1: &str = "<?xml version='1.0'?>
<platform version=\"4.1\">
  <zone id=\"z\" routing=\"Full\">
    <host id=\"h0\" speed=\"1Gf\"/>
    <host id=\"h1\" speed=\"1Gf\"/>
    <link id=\"l\" bandwidth=\"125MBps\" latency=\"50us\"/>
    <route src=\"h0\" dst=\"h1\"><link_ctn id=\"l\"/></route>
  </zone>
</platform>
";

/// P1, parsed once per thread.
pub(crate) fn p1() -> std::rc::Rc<timeless_platform::Platform> {
    thread_local! {
        static P: std::rc::Rc<timeless_platform::Platform> = std::rc::Rc::new(
            timeless_platform::Platform::from_xml(P1, "p1.xml", &Default::default())
                .expect("P1 parses"),
        );
    }
    P.with(|p| p.clone())
}

/// An error's message, for [`crate::Outcome`].
pub(crate) fn msg(e: impl std::fmt::Display) -> String {
    e.to_string()
}
