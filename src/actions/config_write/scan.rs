//! Byte spans of the parts of `config.json` a rewrite touches: the `agents` array's entries and
//! their members. The text was validated as JSON first; any surprise is an error, never a guess.

use std::ops::Range;

use super::MAX_DEPTH;

pub(super) struct Member {
    pub(super) key: String,
    /// The quoted key.
    pub(super) key_span: Range<usize>,
    pub(super) value: Range<usize>,
}

pub(super) struct Obj {
    /// From `{` to `}` inclusive.
    pub(super) span: Range<usize>,
    pub(super) members: Vec<Member>,
}

pub(super) struct Doc {
    pub(super) agents: Vec<Obj>,
    /// Index in `agents` of the entry being edited.
    pub(super) target_index: usize,
    /// That entry's span, `{` to `}`.
    pub(super) target: Range<usize>,
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

/// Why the config could not be spliced: a surprise in its shape, or the agent not there once.
#[derive(Debug)]
pub enum SpliceError {
    /// The shape is not what a validated config has (what was found).
    Shape(String),
    NoAgent(String),
    AgentTwice(String),
    NotUtf8,
    Encode(serde_json::Error),
}

impl std::fmt::Display for SpliceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::text::sanitize;
        match self {
            SpliceError::Shape(what) => {
                write!(f, "config.json could not be spliced ({})", sanitize(what))
            }
            SpliceError::NoAgent(id) => {
                write!(f, "no agent with session id {:?} in config", sanitize(id))
            }
            SpliceError::AgentTwice(id) => {
                write!(f, "session id {:?} appears twice in config", sanitize(id))
            }
            SpliceError::NotUtf8 => f.write_str("config.json is not UTF-8"),
            SpliceError::Encode(e) => write!(f, "config.json could not be spliced ({e})"),
        }
    }
}

impl std::error::Error for SpliceError {}

fn bad(what: &str) -> SpliceError {
    SpliceError::Shape(what.to_string())
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Result<(), SpliceError> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(bad(&format!("expected {:?} at byte {}", c as char, self.i)))
        }
    }

    fn string(&mut self) -> Result<Range<usize>, SpliceError> {
        self.ws();
        let start = self.i;
        if self.peek() != Some(b'"') {
            return Err(bad("expected a string"));
        }
        self.i += 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => return Ok(start..self.i),
                _ => {}
            }
        }
        Err(bad("unterminated string"))
    }

    /// Skip one value of any kind; returns its span.
    fn value(&mut self, depth: usize) -> Result<Range<usize>, SpliceError> {
        if depth > MAX_DEPTH {
            return Err(bad("nested too deeply"));
        }
        self.ws();
        let start = self.i;
        match self.peek() {
            Some(b'"') => return self.string(),
            Some(b'{') => {
                self.object(depth)?;
            }
            Some(b'[') => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                } else {
                    loop {
                        self.value(depth + 1)?;
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                break;
                            }
                            _ => return Err(bad("bad array")),
                        }
                    }
                }
            }
            Some(_) => {
                while self.peek().is_some_and(|c| {
                    !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(bad("empty value"));
                }
            }
            None => return Err(bad("unexpected end")),
        }
        Ok(start..self.i)
    }

    fn object(&mut self, depth: usize) -> Result<Obj, SpliceError> {
        self.ws();
        let start = self.i;
        self.eat(b'{')?;
        let mut members = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Obj {
                span: start..self.i,
                members,
            });
        }
        loop {
            let key_span = self.string()?;
            let key: String = serde_json::from_str(
                std::str::from_utf8(&self.b[key_span.clone()]).map_err(|_| bad("key"))?,
            )
            .map_err(|_| bad("key"))?;
            self.eat(b':')?;
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(bad("bad object")),
            }
        }
        Ok(Obj {
            span: start..self.i,
            members,
        })
    }
}

/// The `agents` array of `text`: its span (`[` to `]`) and its entries (objects only; the
/// validated config has no others).
pub(super) fn agents(text: &str) -> Result<(Range<usize>, Vec<Obj>), SpliceError> {
    let mut p = P {
        b: text.as_bytes(),
        i: 0,
    };
    let top = p.object(0)?;
    let agents = top
        .members
        .iter()
        .rev()
        .find(|m| m.key == "agents")
        .ok_or_else(|| bad("no agents"))?;
    let mut q = P {
        b: text.as_bytes(),
        i: agents.value.start,
    };
    q.eat(b'[')?;
    let mut list = Vec::new();
    q.ws();
    if q.peek() == Some(b']') {
        return Ok((agents.value.clone(), list));
    }
    loop {
        q.ws();
        if q.peek() == Some(b'{') {
            list.push(q.object(1)?);
        } else {
            q.value(1)?;
        }
        q.ws();
        match q.peek() {
            Some(b',') => q.i += 1,
            Some(b']') => break,
            _ => return Err(bad("bad agents array")),
        }
    }
    Ok((agents.value.clone(), list))
}

/// The agents of `text` and which one has `session_id`.
pub(super) fn document(text: &str, session_id: &str) -> Result<Doc, SpliceError> {
    let (_, list) = agents(text)?;
    if list.is_empty() {
        return Err(SpliceError::NoAgent(session_id.to_string()));
    }
    let mut found = None;
    for (i, o) in list.iter().enumerate() {
        let ids: Vec<&Member> = o.members.iter().filter(|m| m.key == "sessionId").collect();
        let is = ids.iter().any(|m| {
            serde_json::from_str::<String>(&text[m.value.clone()])
                .ok()
                .as_deref()
                == Some(session_id)
        });
        if is {
            if found.is_some() {
                return Err(SpliceError::AgentTwice(session_id.to_string()));
            }
            found = Some(i);
        }
    }
    let target_index = found.ok_or_else(|| SpliceError::NoAgent(session_id.to_string()))?;
    let target_obj = list.get(target_index).ok_or_else(|| bad("agents"))?;
    let mut keys: Vec<&str> = target_obj.members.iter().map(|m| m.key.as_str()).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad("a key appears twice in the agent entry"));
    }
    let target = target_obj.span.clone();
    Ok(Doc {
        agents: list,
        target_index,
        target,
    })
}
