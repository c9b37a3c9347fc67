//! Where each MPI rank runs: deployment files, hostfiles, or the default placement.
//!
//! # Deployment XML
//!
//! SimGrid's deployment format (`simgrid.dtd`, `surfxml_sax_cb.cpp`): a `<platform>` whose
//! children are `<actor host="..." function="...">` (or the deprecated `<process>`), each with
//! `<argument value="..."/>` children (kept in order in [`Placement::args`]) and `<prop>`
//! children (ignored). `start_time`, `kill_time` and `on_failure` are checked and ignored.
//!
//! The MPI rank of an actor comes from `function`:
//!
//! * if **every** actor's function is a rank — digits, optionally after a `p` (`"0"`, `"p3"`,
//!   the seed paper's format) — actor with function `k` is rank `k`, and the ranks must be
//!   exactly `0..n` (a duplicate or a gap is an error naming the line);
//! * otherwise (any other name, e.g. SimGrid's `"smpi_replay"`), ranks are given in file
//!   order: the first actor is rank 0.
//!
//! A host that the platform does not have is an error naming the file and line.
//!
//! # Hostfiles and the default
//!
//! [`from_hostfile`] follows smpirun (see [`crate::hostfile`]): rank `i` on
//! `hosts[i % len]`. [`default_for`] is smpirun without a hostfile: all the platform's hosts
//! sorted by name (byte order, so `n-10` before `n-2`; SimGrid's `Engine::get_all_hosts`),
//! round-robin.

use crate::error::PlatformError;
use crate::hostfile::parse_hostfile;
use crate::xml::{self, Element};
use crate::{HostId, Platform};
use std::path::Path;

/// One rank's placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The host the rank runs on.
    pub host: HostId,
    /// The `<argument>` values of the actor, in order (empty for hostfiles and defaults).
    pub args: Vec<String>,
}

/// Placement of every rank; `ranks[i]` is rank `i`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    /// One entry per rank.
    pub ranks: Vec<Placement>,
}

/// One `<actor>` of a deployment file, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Its `function` attribute.
    pub function: String,
    /// Its 1-based line in the file.
    pub line: u32,
    /// Its host and `<argument>` values.
    pub placement: Placement,
}

fn read(path: &Path) -> Result<(String, String), PlatformError> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| PlatformError::Io {
        path: origin.clone(),
        source,
    })?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), origin))
}

/// Reads a deployment file (`<actor>`/`<process>` elements).
pub fn from_file(path: &Path, platform: &Platform) -> Result<Deployment, PlatformError> {
    let (text, origin) = read(path)?;
    from_xml(&text, &origin, platform)
}

/// The rank encoded in a function name: `"12"` or `"p12"`.
fn function_rank(function: &str) -> Option<usize> {
    let digits = function.strip_prefix('p').unwrap_or(function);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn check_attrs(el: &Element, allowed: &[&str], origin: &str) -> Result<(), PlatformError> {
    for (key, _) in &el.attrs {
        if !allowed.contains(&key.as_str()) {
            return Err(PlatformError::UnknownAttribute {
                path: origin.to_string(),
                line: el.line,
                element: el.name.clone(),
                attribute: key.clone(),
                expected: allowed.join(", "),
            });
        }
    }
    Ok(())
}

fn required<'a>(el: &'a Element, name: &str, origin: &str) -> Result<&'a str, PlatformError> {
    el.attr(name)
        .ok_or_else(|| PlatformError::MissingAttribute {
            path: origin.to_string(),
            line: el.line,
            element: el.name.clone(),
            attribute: name.to_string(),
        })
}

/// Reads a deployment from XML text; `origin` names it in messages.
pub fn from_xml(
    text: &str,
    origin: &str,
    platform: &Platform,
) -> Result<Deployment, PlatformError> {
    let actors: Vec<(Option<usize>, u32, Placement)> = actors_from_xml(text, origin, platform)?
        .into_iter()
        .map(|a| (function_rank(&a.function), a.line, a.placement))
        .collect();
    ranks_of(actors, origin)
}

/// Reads a deployment file's actors in file order, without giving them ranks (SimGrid's
/// `replay_multiple` deployments name the rank in an argument).
///
/// # Errors
/// As [`from_file`], except rank numbering.
pub fn actors_from_file(path: &Path, platform: &Platform) -> Result<Vec<Actor>, PlatformError> {
    let (text, origin) = read(path)?;
    actors_from_xml(&text, &origin, platform)
}

/// [`actors_from_file`] on XML text; `origin` names it in messages.
pub fn actors_from_xml(
    text: &str,
    origin: &str,
    platform: &Platform,
) -> Result<Vec<Actor>, PlatformError> {
    let root = xml::parse_document(text, origin)?;
    if root.name != "platform" {
        return Err(PlatformError::UnexpectedElement {
            path: origin.to_string(),
            line: root.line,
            element: root.name.clone(),
            parent: "(document)".to_string(),
            expected: "platform".to_string(),
        });
    }
    check_attrs(&root, &["version"], origin)?;
    if let Some(v) = root.attr("version") {
        let hundredths = crate::units::strtod_prefix(v)
            .ok()
            .filter(|(x, _)| x.is_finite())
            .map(|(x, _)| (100.0 * x).round() as i64);
        match hundredths {
            Some(h) if h > 410 => {
                return Err(PlatformError::VersionTooNew {
                    path: origin.to_string(),
                    line: root.line,
                    version: v.to_string(),
                })
            }
            Some(_) => {}
            None => {
                return Err(PlatformError::BadValue {
                    path: origin.to_string(),
                    line: root.line,
                    element: "platform".to_string(),
                    attribute: "version".to_string(),
                    value: v.to_string(),
                    expected: "a version number such as 4.1".to_string(),
                })
            }
        }
    }
    let mut actors = Vec::new();
    for el in &root.children {
        if el.name != "actor" && el.name != "process" {
            return Err(PlatformError::UnexpectedElement {
                path: origin.to_string(),
                line: el.line,
                element: el.name.clone(),
                parent: "platform".to_string(),
                expected: "actor, process".to_string(),
            });
        }
        check_attrs(
            el,
            &["host", "function", "start_time", "kill_time", "on_failure"],
            origin,
        )?;
        let host_name = required(el, "host", origin)?;
        let function = required(el, "function", origin)?;
        if let Some(f) = el.attr("on_failure") {
            if f != "DIE" && f != "RESTART" {
                return Err(PlatformError::BadValue {
                    path: origin.to_string(),
                    line: el.line,
                    element: el.name.clone(),
                    attribute: "on_failure".to_string(),
                    value: f.to_string(),
                    expected: "DIE or RESTART".to_string(),
                });
            }
        }
        let host = platform
            .host_by_name(host_name)
            .ok_or_else(|| PlatformError::UnknownName {
                path: origin.to_string(),
                line: el.line,
                kind: "host".to_string(),
                name: host_name.to_string(),
                context: format!(" (cannot create actor '{function}')"),
            })?;
        let mut args = Vec::new();
        for child in &el.children {
            match child.name.as_str() {
                "argument" => {
                    check_attrs(child, &["value"], origin)?;
                    args.push(required(child, "value", origin)?.to_string());
                }
                "prop" => check_attrs(child, &["id", "value"], origin)?,
                _ => {
                    return Err(PlatformError::UnexpectedElement {
                        path: origin.to_string(),
                        line: child.line,
                        element: child.name.clone(),
                        parent: el.name.clone(),
                        expected: "argument, prop".to_string(),
                    })
                }
            }
        }
        actors.push(Actor {
            function: function.to_string(),
            line: el.line,
            placement: Placement { host, args },
        });
    }
    Ok(actors)
}

/// Ranks of actors: by function when every function is a rank, else in file order.
fn ranks_of(
    actors: Vec<(Option<usize>, u32, Placement)>,
    origin: &str,
) -> Result<Deployment, PlatformError> {
    if !actors.is_empty() && actors.iter().all(|(rank, _, _)| rank.is_some()) {
        let n = actors.len();
        let mut slots: Vec<Option<(u32, Placement)>> = vec![None; n];
        for (rank, line, placement) in actors {
            let rank = rank.expect("checked above");
            let invalid = |message: String| PlatformError::Invalid {
                path: origin.to_string(),
                line,
                message,
            };
            if rank >= n {
                return Err(invalid(format!(
                    "actor rank {rank} is out of range: {n} actors give ranks 0 to {}",
                    n - 1
                )));
            }
            if let Some((first, _)) = &slots[rank] {
                return Err(invalid(format!(
                    "rank {rank} is deployed twice (first at line {first})"
                )));
            }
            slots[rank] = Some((line, placement));
        }
        let ranks = slots
            .into_iter()
            .map(|s| s.expect("n distinct ranks below n fill every slot").1)
            .collect();
        return Ok(Deployment { ranks });
    }
    Ok(Deployment {
        ranks: actors.into_iter().map(|(_, _, p)| p).collect(),
    })
}

/// Reads an smpirun hostfile; `np` ranks (default: one per listed host).
pub fn from_hostfile(
    path: &Path,
    platform: &Platform,
    np: Option<usize>,
) -> Result<Deployment, PlatformError> {
    let (text, origin) = read(path)?;
    from_hostfile_text(&text, &origin, platform, np)
}

/// Like [`from_hostfile`], from the text of the file.
pub fn from_hostfile_text(
    text: &str,
    origin: &str,
    platform: &Platform,
    np: Option<usize>,
) -> Result<Deployment, PlatformError> {
    let entries = parse_hostfile(text, origin)?;
    let hosts = entries
        .iter()
        .map(|e| {
            platform
                .host_by_name(&e.name)
                .ok_or_else(|| PlatformError::UnknownName {
                    path: origin.to_string(),
                    line: e.line,
                    kind: "host".to_string(),
                    name: e.name.clone(),
                    context: " in the platform (hostfile lines are not trimmed)".to_string(),
                })
        })
        .collect::<Result<Vec<HostId>, _>>()?;
    let np = match np {
        Some(n) if n > 0 => n,
        _ => hosts.len(),
    };
    Ok(Deployment {
        ranks: (0..np)
            .map(|i| Placement {
                host: hosts[i % hosts.len()],
                args: Vec::new(),
            })
            .collect(),
    })
}

/// The most ranks a replay takes: 1 << 24 (16 777 216). Each rank costs tens of bytes of
/// placement and replay state before its trace is read, so a rank count taken from input (`-n`,
/// a hostfile's `name:k`) beyond this is refused as bad input instead of aborting the process on
/// a failed allocation.
pub const MAX_RANKS: usize = 1 << 24;

/// smpirun without a hostfile: the platform's hosts sorted by name, round-robin over `np`
/// ranks. Empty if the platform has no host.
pub fn default_for(platform: &Platform, np: usize) -> Deployment {
    let mut hosts: Vec<HostId> = (0..platform.hosts().len() as u32).map(HostId).collect();
    hosts.sort_by(|a, b| platform.host(*a).name.cmp(&platform.host(*b).name));
    if hosts.is_empty() {
        return Deployment { ranks: Vec::new() };
    }
    Deployment {
        ranks: (0..np)
            .map(|i| Placement {
                host: hosts[i % hosts.len()],
                args: Vec::new(),
            })
            .collect(),
    }
}
