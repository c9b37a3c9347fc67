//! The one error type of this crate.
//!
//! Every error that comes from an input file names the file (`path`, as given by the caller)
//! and the 1-based line of the element start tag that caused it, so that the message can be
//! printed as is: `platform.xml:12: ...`. Route errors happen after parsing and name the two
//! hosts instead. All variants are fatal for the input that produced them; nothing in this
//! crate panics on bad input.
//!
//! Where SimGrid 3.32 aborts (an `xbt_assert`, an exception, or a crash), this crate returns
//! one of these errors, with the SimGrid message reproduced in spirit.

use thiserror::Error;

/// Errors from reading platforms, deployments and hostfiles, and from route queries.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PlatformError {
    /// The file could not be read.
    #[error("{path}: cannot read the file: {source}")]
    Io {
        /// File path as given by the caller.
        path: String,
        /// Underlying I/O error.
        source: std::io::Error,
    },

    /// The file is not well-formed XML.
    #[error("{path}:{line}: malformed XML: {message}")]
    Xml {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// What the XML reader reported.
        message: String,
    },

    /// An element that the SimGrid DTD does not define at this place.
    #[error("{path}:{line}: unexpected element <{element}> inside <{parent}>; expected one of: {expected}")]
    UnexpectedElement {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// The offending element.
        element: String,
        /// Its parent element.
        parent: String,
        /// The elements accepted there.
        expected: String,
    },

    /// An attribute that the element does not define.
    #[error("{path}:{line}: <{element}> has no attribute '{attribute}'; accepted attributes: {expected}")]
    UnknownAttribute {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// Element name.
        element: String,
        /// The unknown attribute.
        attribute: String,
        /// The attributes accepted by this element.
        expected: String,
    },

    /// A required attribute is absent.
    #[error("{path}:{line}: <{element}> needs the attribute '{attribute}'")]
    MissingAttribute {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// Element name.
        element: String,
        /// The missing attribute.
        attribute: String,
    },

    /// An attribute value outside its allowed set (an enumeration, a malformed integer...).
    #[error("{path}:{line}: <{element} {attribute}=\"{value}\">: expected {expected}")]
    BadValue {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// Element name.
        element: String,
        /// Attribute name.
        attribute: String,
        /// The value found.
        value: String,
        /// What was expected instead.
        expected: String,
    },

    /// A quantity (speed, bandwidth, time) with a unit outside SimGrid's tables.
    #[error("{path}:{line}: {what} '{value}': unknown unit '{unit}'; accepted units: {accepted}")]
    BadUnit {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// What the value describes, e.g. "bandwidth of link l1".
        what: String,
        /// The whole attribute value.
        value: String,
        /// The unit suffix that was not recognised.
        unit: String,
        /// The accepted units of this kind of quantity.
        accepted: String,
    },

    /// A quantity that does not start with a number, or that overflows a double.
    #[error("{path}:{line}: {what} '{value}': {problem}")]
    BadNumber {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// What the value describes.
        what: String,
        /// The whole attribute value.
        value: String,
        /// "cannot parse a number", "value out of range"...
        problem: String,
    },

    /// A name that refers to nothing declared before (a host, link, router or zone).
    #[error("{path}:{line}: {kind} '{name}' does not exist{context}")]
    UnknownName {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// "host", "link", "split-duplex link", "node" (host, router or zone)...
        kind: String,
        /// The name that was not found.
        name: String,
        /// Extra context, starting with "; " when not empty.
        context: String,
    },

    /// Two objects of the same kind with one name.
    #[error("{path}:{line}: {kind} '{name}' is declared several times")]
    DuplicateId {
        /// File path.
        path: String,
        /// 1-based line of the second declaration.
        line: u32,
        /// "host", "link", "zone", "router", "node"...
        kind: String,
        /// The duplicated name.
        name: String,
    },

    /// A `routing` attribute that names no zone kind.
    #[error("{path}:{line}: zone '{zone}': unknown routing '{routing}'; expected one of Full, Floyd, Dijkstra, DijkstraCache, None, Cluster (case-insensitive)")]
    UnknownRouting {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// Zone id.
        zone: String,
        /// The routing found.
        routing: String,
    },

    /// `<platform version>` newer than the 4.1 format understood by SimGrid 3.32.
    #[error("{path}:{line}: platform version {version} is too new: SimGrid 3.32 understands versions up to 4.1")]
    VersionTooNew {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// The version as written.
        version: String,
    },

    /// `<platform version>` older than 3 (bytes and flops were megabytes and megaflops).
    #[error("{path}:{line}: platform version {version} is too old: versions below 3 used other units and tag names; convert the file with simgrid_update_xml")]
    VersionTooOld {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// The version as written.
        version: String,
    },

    /// A construct SimGrid accepts but timeless does not model (WIFI links, Vivaldi zones...).
    #[error("{path}:{line}: not supported by timeless: {what}")]
    Unsupported {
        /// File path.
        path: String,
        /// 1-based line.
        line: u32,
        /// What is not supported.
        what: String,
    },

    /// A declaration that SimGrid 3.32 rejects (a duplicated route, a bad gateway...).
    #[error("{path}:{line}: {message}")]
    Invalid {
        /// File path.
        path: String,
        /// 1-based line (0 when the problem concerns the whole file).
        line: u32,
        /// SimGrid's complaint, reworded.
        message: String,
    },

    /// No usable route between two hosts (SimGrid aborts the simulation in that case).
    #[error("no route from host '{src}' to host '{dst}': {reason}")]
    NoRoute {
        /// Source host name.
        src: String,
        /// Destination host name.
        dst: String,
        /// Why, in SimGrid's words where possible.
        reason: String,
    },

    /// A host or link index that does not belong to this platform.
    #[error("invalid {kind} index {index}: the platform has {count}")]
    BadIndex {
        /// "host" or "link".
        kind: &'static str,
        /// The index given.
        index: u32,
        /// How many exist.
        count: usize,
    },
}

/// Where an error comes from: the file path and the line of the current element.
#[derive(Debug, Clone)]
pub(crate) struct Loc {
    pub path: String,
    pub line: u32,
}

impl Loc {
    pub(crate) fn new(path: &str, line: u32) -> Self {
        Loc {
            path: path.to_string(),
            line,
        }
    }

    /// A [`PlatformError::Invalid`] at this location.
    pub(crate) fn invalid(&self, message: impl Into<String>) -> PlatformError {
        PlatformError::Invalid {
            path: self.path.clone(),
            line: self.line,
            message: message.into(),
        }
    }

    /// A [`PlatformError::UnknownName`] at this location.
    pub(crate) fn unknown(&self, kind: &str, name: &str, context: &str) -> PlatformError {
        PlatformError::UnknownName {
            path: self.path.clone(),
            line: self.line,
            kind: kind.to_string(),
            name: name.to_string(),
            context: context.to_string(),
        }
    }

    /// A [`PlatformError::DuplicateId`] at this location.
    pub(crate) fn duplicate(&self, kind: &str, name: &str) -> PlatformError {
        PlatformError::DuplicateId {
            path: self.path.clone(),
            line: self.line,
            kind: kind.to_string(),
            name: name.to_string(),
        }
    }

    /// A [`PlatformError::Unsupported`] at this location.
    pub(crate) fn unsupported(&self, what: impl Into<String>) -> PlatformError {
        PlatformError::Unsupported {
            path: self.path.clone(),
            line: self.line,
            what: what.into(),
        }
    }

    /// `path:line: ` prefix for notices.
    pub(crate) fn prefix(&self) -> String {
        format!("{}:{}: ", self.path, self.line)
    }
}
