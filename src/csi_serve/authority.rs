//! A client's `:authority` as grpc-go takes it. grpc-go's server reads the pseudo-header as
//! it comes; the HTTP/2 layer under tonic (h2) holds it to RFC 3986's authority and resets a
//! stream that has another (RST_STREAM, PROTOCOL_ERROR). Python grpcio on a unix socket
//! sends the socket's path there, percent-encoded (`tmp%2Fcsi.sock`), so its calls with
//! default channel options failed on the first one.
//!
//! So the bytes a connection reads pass through [`AuthorityFix`] before h2 sees them: each
//! HEADERS frame's header block (with its CONTINUATION frames) is read with
//! [`super::hpack`], and an `:authority` that is not an authority has each character that
//! may not appear in a host name replaced by `-` (same length, so both sides' dynamic tables
//! stay the same size). Nothing else changes: other frames and fields pass byte for byte.
//! What is not valid HTTP/2 or HPACK is passed on as it came, and from then on every byte
//! of the connection is: h2 answers it as it would have.

use super::hpack;
use tonic::codegen::http::uri::Authority;

/// The connection preface a client sends first (RFC 9113 3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Frame types and flags (RFC 9113 6.2, 6.10).
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The largest frame the server accepts (SETTINGS_MAX_FRAME_SIZE's default, which it does
/// not change), and so the largest this writes.
const MAX_FRAME: usize = 16_384;
/// The most header-block bytes held while waiting for its last CONTINUATION.
const MAX_BLOCK: usize = 64 * 1024;

/// The rewriting state of one connection's reads.
#[derive(Debug)]
pub(super) struct AuthorityFix {
    /// Bytes read and not yet passed on.
    input: Vec<u8>,
    /// Bytes ready for h2.
    output: Vec<u8>,
    preface_seen: bool,
    /// A header block whose END_HEADERS has not come yet.
    pending: Option<Pending>,
    table: hpack::Table,
    /// Everything passes through unchanged from now on.
    passthrough: bool,
}

#[derive(Debug)]
struct Pending {
    /// The frames as they came, passed on whole if the block cannot be rewritten.
    raw: Vec<u8>,
    stream: [u8; 4],
    flags: u8,
    priority: Option<[u8; 5]>,
    block: Vec<u8>,
}

impl AuthorityFix {
    pub(super) fn new() -> AuthorityFix {
        AuthorityFix {
            input: Vec::new(),
            output: Vec::new(),
            preface_seen: false,
            pending: None,
            table: hpack::Table::new(),
            passthrough: false,
        }
    }

    /// Take in bytes the client sent.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        if self.passthrough {
            self.output.extend_from_slice(bytes);
            return;
        }
        self.input.extend_from_slice(bytes);
        self.process();
    }

    /// The client closed its side: whatever is held goes on as it came.
    pub(super) fn finish(&mut self) {
        self.give_up();
    }

    /// Move up to `max` bytes ready for h2 out.
    pub(super) fn take(&mut self, max: usize) -> Vec<u8> {
        let n = max.min(self.output.len());
        self.output.drain(..n).collect()
    }

    /// Whether bytes are ready for h2.
    pub(super) fn has_output(&self) -> bool {
        !self.output.is_empty()
    }

    fn give_up(&mut self) {
        self.passthrough = true;
        if let Some(p) = self.pending.take() {
            self.output.extend_from_slice(&p.raw);
        }
        self.output.append(&mut self.input);
    }

    fn process(&mut self) {
        if !self.preface_seen {
            let n = self.input.len().min(PREFACE.len());
            if self.input[..n] != PREFACE[..n] {
                return self.give_up();
            }
            if n < PREFACE.len() {
                return;
            }
            self.output.extend(self.input.drain(..PREFACE.len()));
            self.preface_seen = true;
        }
        while self.input.len() >= 9 && !self.passthrough {
            let head = &self.input[..9];
            let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
            if len > MAX_FRAME {
                return self.give_up();
            }
            if self.input.len() < 9 + len {
                return;
            }
            let frame: Vec<u8> = self.input.drain(..9 + len).collect();
            self.frame(frame);
        }
    }

    fn frame(&mut self, frame: Vec<u8>) {
        let (kind, flags) = (frame[3], frame[4]);
        let stream = [frame[5], frame[6], frame[7], frame[8]];
        let payload = &frame[9..];
        match (kind, self.pending.is_some()) {
            (HEADERS, false) => {
                let Some((priority, fragment)) = split_headers(flags, payload) else {
                    return self.give_up_with(frame);
                };
                self.pending = Some(Pending {
                    raw: Vec::new(),
                    stream,
                    flags: flags & !(PADDED | END_HEADERS),
                    priority,
                    block: fragment.to_vec(),
                });
            }
            (CONTINUATION, true) => {
                let fits = self.pending.as_ref().is_some_and(|p| {
                    p.stream == stream && p.block.len() + payload.len() <= MAX_BLOCK
                });
                if !fits {
                    return self.give_up_with(frame);
                }
                if let Some(p) = &mut self.pending {
                    p.block.extend_from_slice(payload);
                }
            }
            (_, true) => return self.give_up_with(frame),
            (_, false) => {
                self.output.extend_from_slice(&frame);
                return;
            }
        }
        if let Some(p) = &mut self.pending {
            p.raw.extend_from_slice(&frame);
        }
        if flags & END_HEADERS != 0 {
            if let Some(p) = self.pending.take() {
                match hpack::rewrite(&mut self.table, &p.block, fixed_authority) {
                    Some(block) => self.write_headers(&p, &block),
                    None => {
                        self.pending = Some(p);
                        self.give_up();
                    }
                }
            }
        }
    }

    fn give_up_with(&mut self, frame: Vec<u8>) {
        if let Some(p) = &mut self.pending {
            p.raw.extend_from_slice(&frame);
        } else {
            self.output.extend_from_slice(&frame);
        }
        self.give_up();
    }

    /// The block as a HEADERS frame and as many CONTINUATION frames as it needs.
    fn write_headers(&mut self, p: &Pending, block: &[u8]) {
        let mut first = Vec::with_capacity(5 + block.len().min(MAX_FRAME));
        let mut flags = p.flags;
        if let Some(prio) = p.priority {
            first.extend_from_slice(&prio);
            flags |= PRIORITY;
        }
        let take = (MAX_FRAME - first.len()).min(block.len());
        first.extend_from_slice(&block[..take]);
        let mut rest = block[take..].chunks(MAX_FRAME).peekable();
        let end = |last: bool| if last { END_HEADERS } else { 0 };
        self.write_frame(
            HEADERS,
            flags | end(rest.peek().is_none()),
            p.stream,
            &first,
        );
        while let Some(chunk) = rest.next() {
            let last = rest.peek().is_none();
            self.write_frame(CONTINUATION, end(last), p.stream, chunk);
        }
    }

    fn write_frame(&mut self, kind: u8, flags: u8, stream: [u8; 4], payload: &[u8]) {
        let len = u32::try_from(payload.len()).unwrap_or(0).to_be_bytes();
        self.output
            .extend_from_slice(&[len[1], len[2], len[3], kind, flags]);
        self.output.extend_from_slice(&stream);
        self.output.extend_from_slice(payload);
    }
}

/// A HEADERS payload's priority fields and header block fragment, without its padding;
/// `None` when the padding does not fit.
fn split_headers(flags: u8, payload: &[u8]) -> Option<(Option<[u8; 5]>, &[u8])> {
    let mut body = payload;
    let mut pad = 0;
    if flags & PADDED != 0 {
        pad = usize::from(*body.first()?);
        body = &body[1..];
    }
    let mut priority = None;
    if flags & PRIORITY != 0 {
        let p: [u8; 5] = body.get(..5)?.try_into().ok()?;
        priority = Some(p);
        body = &body[5..];
    }
    let end = body.len().checked_sub(pad)?;
    Some((priority, &body[..end]))
}

/// The value to give h2 for an `:authority` it would refuse: each character that may not
/// appear in a host name as `-`; `None` to leave the value as it is (valid already, or
/// empty, which no same-length value fixes).
fn fixed_authority(value: &[u8]) -> Option<Vec<u8>> {
    if value.is_empty() || Authority::try_from(value).is_ok() {
        return None;
    }
    let fixed: Vec<u8> = value
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b == b'.' {
                b
            } else {
                b'-'
            }
        })
        .collect();
    Authority::try_from(fixed.as_slice())
        .is_ok()
        .then_some(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).expect("small").to_be_bytes();
        let mut f = vec![len[1], len[2], len[3], kind, flags];
        f.extend(stream.to_be_bytes());
        f.extend(payload);
        f
    }

    /// `:authority` as a literal with incremental indexing, raw value.
    fn authority_block(value: &str) -> Vec<u8> {
        let mut b = vec![0x82, 0x41, u8::try_from(value.len()).expect("short")];
        b.extend(value.as_bytes());
        b
    }

    fn run(chunks: &[&[u8]]) -> Vec<u8> {
        let mut fix = AuthorityFix::new();
        let mut out = Vec::new();
        for c in chunks {
            fix.push(c);
            out.extend(fix.take(usize::MAX));
        }
        fix.finish();
        out.extend(fix.take(usize::MAX));
        out
    }

    #[test]
    fn grpcio_s_socket_path_becomes_a_host_name_of_the_same_length() {
        assert_eq!(
            fixed_authority(b"tmp%2Fcsi.sock").as_deref(),
            Some(&b"tmp-2Fcsi.sock"[..])
        );
        assert_eq!(fixed_authority(b"localhost"), None);
        assert_eq!(fixed_authority(b"localhost:50051"), None);
        assert_eq!(fixed_authority(b""), None);
    }

    /// Split anywhere, padded, with a priority, across a CONTINUATION: the block comes out
    /// as one HEADERS frame with the authority fixed; the other frames as they were.
    #[test]
    fn rewrites_a_header_block_however_it_arrives() {
        let block = authority_block("tmp%2Fcsi.sock");
        let mut headers_payload = vec![3]; // pad length
        headers_payload.extend([0, 0, 0, 0, 15]); // priority
        headers_payload.extend(&block[..4]);
        headers_payload.extend([0, 0, 0]);
        let mut input = PREFACE.to_vec();
        input.extend(frame(4, 0, 0, &[]));
        input.extend(frame(HEADERS, PADDED | PRIORITY, 1, &headers_payload));
        input.extend(frame(CONTINUATION, END_HEADERS, 1, &block[4..]));
        input.extend(frame(0, 1, 1, &[0; 5]));
        let chunks: Vec<&[u8]> = input.chunks(7).collect();
        let out = run(&chunks);

        let mut want = PREFACE.to_vec();
        want.extend(frame(4, 0, 0, &[]));
        let mut payload = vec![0, 0, 0, 0, 15];
        payload.extend(authority_block("tmp-2Fcsi.sock"));
        want.extend(frame(HEADERS, PRIORITY | END_HEADERS, 1, &payload));
        want.extend(frame(0, 1, 1, &[0; 5]));
        assert_eq!(out, want);
    }

    /// What is not HTTP/2 passes as it came, and so does all that follows.
    #[test]
    fn passes_on_what_it_cannot_read() {
        let input = b"GET / HTTP/1.1\r\n\r\n".to_vec();
        assert_eq!(run(&[&input]), input);
        let mut input = PREFACE.to_vec();
        input.extend(frame(HEADERS, END_HEADERS, 1, &[0x41, 0x85, 0x00]));
        input.extend(frame(HEADERS, END_HEADERS, 3, &authority_block("a%b")));
        assert_eq!(run(&[&input]), input);
    }
}
