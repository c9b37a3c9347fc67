//! A small element tree read with quick-xml, keeping the line of every start tag.
//!
//! SimGrid reads its XML files with a FleXML-generated SAX parser and acts on start and end
//! tags. Platform and deployment files are small enough (a few MB at most) to be read into a
//! tree first and walked in document order afterwards, which gives the same sequence of
//! actions and keeps the walkers simple. Text content is ignored (only the deprecated
//! `<trace>` element has any), and so are comments, processing instructions and the DOCTYPE.
//! Attribute values are unescaped (`&amp;` and friends, character references).

use crate::error::PlatformError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// One XML element with its attributes (in file order) and children.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    /// 1-based line of the start tag.
    pub line: u32,
    pub children: Vec<Element>,
}

impl Element {
    /// The value of attribute `name`, if present.
    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Maps byte offsets to line numbers, for offsets visited in increasing order.
struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: u32,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: usize) -> u32 {
        let offset = offset.min(self.text.len());
        if offset < self.offset {
            // Never happens with a forward reader; recount from the start to stay correct.
            self.offset = 0;
            self.line = 1;
        }
        self.line += self.text[self.offset..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u32;
        self.offset = offset;
        self.line
    }
}

fn element_from_start(
    start: &BytesStart<'_>,
    line: u32,
    path: &str,
) -> Result<Element, PlatformError> {
    let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
    let mut attrs = Vec::new();
    for attr in start.attributes() {
        let attr = attr.map_err(|e| PlatformError::Xml {
            path: path.to_string(),
            line,
            message: format!("in <{name}>: {e}"),
        })?;
        let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
        let value = attr
            .unescape_value()
            .map_err(|e| PlatformError::Xml {
                path: path.to_string(),
                line,
                message: format!("in <{name} {key}>: {e}"),
            })?
            .into_owned();
        attrs.push((key, value));
    }
    Ok(Element {
        name,
        attrs,
        line,
        children: Vec::new(),
    })
}

/// Reads `text` into its root element. `path` is only used in error messages.
pub(crate) fn parse_document(text: &str, path: &str) -> Result<Element, PlatformError> {
    let mut reader = Reader::from_str(text);
    {
        let config = reader.config_mut();
        config.expand_empty_elements = true;
        config.trim_text(true);
        config.check_end_names = true;
    }
    let mut lines = LineCounter {
        text: text.as_bytes(),
        offset: 0,
        line: 1,
    };
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader.read_event();
        let end_pos = reader.buffer_position() as usize;
        match event {
            Err(e) => {
                let line = lines.line_at(reader.error_position() as usize);
                return Err(PlatformError::Xml {
                    path: path.to_string(),
                    line,
                    message: e.to_string(),
                });
            }
            Ok(Event::Start(start)) => {
                // The tag ends at `end_pos`; its '<' is `len + 2` bytes before (or one byte
                // later for an expanded `<x/>`): either way, on the line of the tag's name.
                let tag_start = end_pos.saturating_sub(start.len() + 2);
                let line = lines.line_at(tag_start);
                let element = element_from_start(&start, line, path)?;
                if root.is_some() && stack.is_empty() {
                    return Err(PlatformError::Xml {
                        path: path.to_string(),
                        line,
                        message: format!("a second root element <{}>", element.name),
                    });
                }
                stack.push(element);
            }
            Ok(Event::End(_)) => {
                // check_end_names guarantees the match.
                if let Some(done) = stack.pop() {
                    match stack.last_mut() {
                        Some(parent) => parent.children.push(done),
                        None => root = Some(done),
                    }
                }
            }
            Ok(Event::Eof) => break,
            Ok(Event::Text(t)) => {
                if stack.is_empty() {
                    let raw = String::from_utf8_lossy(t.as_ref()).into_owned();
                    if !raw.trim().is_empty() {
                        let line = lines.line_at(end_pos.saturating_sub(t.len()));
                        return Err(PlatformError::Xml {
                            path: path.to_string(),
                            line,
                            message: format!("text outside the root element: '{}'", raw.trim()),
                        });
                    }
                }
            }
            Ok(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(PlatformError::Xml {
            path: path.to_string(),
            line: open.line,
            message: format!("<{}> is never closed", open.name),
        });
    }
    root.ok_or_else(|| PlatformError::Xml {
        path: path.to_string(),
        line: lines.line_at(text.len()),
        message: "no root element".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_attributes() {
        let text = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"x.dtd\">\n<platform version=\"4.1\">\n  <zone id=\"a&amp;b\"\n        routing=\"Full\">\n    <host id=\"h\" speed=\"1f\"/>\n  </zone>\n</platform>\n";
        let root = parse_document(text, "t.xml").unwrap();
        assert_eq!(root.name, "platform");
        assert_eq!(root.line, 3);
        let zone = &root.children[0];
        assert_eq!(zone.line, 4);
        assert_eq!(zone.attr("id"), Some("a&b"));
        assert_eq!(zone.children[0].line, 6);
        assert_eq!(zone.children[0].attr("speed"), Some("1f"));
    }

    #[test]
    fn malformed_names_line() {
        let text = "<platform>\n<zone id='z'>\n<host id='h'>\n</zone>\n</platform>\n";
        let err = parse_document(text, "bad.xml").unwrap_err().to_string();
        assert!(err.starts_with("bad.xml:4:"), "{err}");
    }

    #[test]
    fn unclosed_root() {
        let err = parse_document("<platform>\n<zone id='z'>\n", "u.xml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("u.xml:"), "{err}");
    }
}
