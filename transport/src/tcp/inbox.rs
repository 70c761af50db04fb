//! Frames arriving on a socket: bytes are read into a staging buffer and parsed there; a
//! frame that does not fit what is staged gets its own buffer of the announced length, and
//! the rest of it is read straight into that buffer (one copy less for bulk messages, and
//! no shifting of staged bytes per frame).
#![forbid(unsafe_code)]

use std::io::{ErrorKind, Read};

use crate::wire::{FRAME_HEADER, MAX_FRAME, WireError};

/// Bytes of the staging buffer.
const STAGE: usize = 64 << 10;

/// What a read brought.
#[derive(Debug)]
pub(super) enum Got {
    /// Bytes arrived (frames may have completed).
    Bytes(usize),
    /// Nothing to read now.
    WouldBlock,
    /// The peer closed its end.
    Eof,
}

/// Reassembles frames and checks their lengths and sequence numbers.
#[derive(Debug)]
pub(super) struct Inbox {
    stage: Vec<u8>,
    start: usize,
    end: usize,
    /// A frame being filled in place: its buffer and the bytes filled.
    partial: Option<(Vec<u8>, usize)>,
    next_seq: u64,
}

impl Inbox {
    pub(super) fn new() -> Self {
        Inbox {
            stage: vec![0; STAGE],
            start: 0,
            end: 0,
            partial: None,
            next_seq: 0,
        }
    }

    /// Bytes of a frame received but not complete.
    pub(super) fn buffered(&self) -> usize {
        (self.end - self.start) + self.partial.as_ref().map_or(0, |p| p.1 + FRAME_HEADER)
    }

    /// One read from `s`; every frame it completes goes to `out`, in order. A frame too long
    /// or out of sequence is an error (the connection is then unusable).
    pub(super) fn read(
        &mut self,
        s: &mut impl Read,
        out: &mut impl FnMut(Vec<u8>),
    ) -> Result<std::io::Result<Got>, WireError> {
        let got = match &mut self.partial {
            Some((buf, filled)) => match s.read(&mut buf[*filled..]) {
                Ok(0) => return Ok(Ok(Got::Eof)),
                Ok(n) => {
                    *filled += n;
                    if *filled == buf.len() {
                        let (buf, _) = self.partial.take().unwrap_or_default();
                        out(buf);
                    }
                    n
                }
                Err(e) => return Ok(would_block(e)),
            },
            None => {
                if self.start == self.end {
                    (self.start, self.end) = (0, 0);
                } else if self.end == self.stage.len() {
                    // Less than a header at the end: move it to the front.
                    self.stage.copy_within(self.start..self.end, 0);
                    (self.start, self.end) = (0, self.end - self.start);
                }
                match s.read(&mut self.stage[self.end..]) {
                    Ok(0) => return Ok(Ok(Got::Eof)),
                    Ok(n) => {
                        self.end += n;
                        self.parse(out)?;
                        n
                    }
                    Err(e) => return Ok(would_block(e)),
                }
            }
        };
        Ok(Ok(Got::Bytes(got)))
    }

    /// Takes every complete frame out of the staged bytes; starts a partial frame for one
    /// that is not complete yet.
    fn parse(&mut self, out: &mut impl FnMut(Vec<u8>)) -> Result<(), WireError> {
        while self.end - self.start >= FRAME_HEADER {
            let h = &self.stage[self.start..self.start + FRAME_HEADER];
            let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            if len > MAX_FRAME {
                return Err(WireError::FrameTooLong(len));
            }
            let mut s = [0u8; 8];
            s.copy_from_slice(&h[4..12]);
            let seq = u64::from_le_bytes(s);
            if seq != self.next_seq {
                return Err(WireError::OutOfSequence {
                    got: seq,
                    expected: self.next_seq,
                });
            }
            self.next_seq += 1;
            let body = self.start + FRAME_HEADER;
            let len = len as usize;
            if self.end - body >= len {
                out(self.stage[body..body + len].to_vec());
                self.start = body + len;
            } else {
                let mut buf = vec![0u8; len];
                let have = self.end - body;
                buf[..have].copy_from_slice(&self.stage[body..self.end]);
                self.partial = Some((buf, have));
                (self.start, self.end) = (0, 0);
                return Ok(());
            }
        }
        Ok(())
    }
}

fn would_block(e: std::io::Error) -> std::io::Result<Got> {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::Interrupted => Ok(Got::WouldBlock),
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::encode_frame;

    /// A reader that hands out its bytes in pieces of the given sizes, then EOF.
    struct Pieces(Vec<u8>, Vec<usize>, usize);

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let rest = &self.0[self.2..];
            if rest.is_empty() {
                return Ok(0);
            }
            let want = self.1.pop().unwrap_or(usize::MAX).max(1);
            let n = want.min(buf.len()).min(rest.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.2 += n;
            Ok(n)
        }
    }

    #[test]
    fn frames_of_any_size_come_out_whole_from_any_pieces() {
        let sizes = [0usize, 5, 70_000, 12, 200_000, 1, 65_524, 65_536, 3];
        let mut bytes = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            bytes.extend(encode_frame(i as u64, &vec![i as u8; n]).unwrap());
        }
        for pieces in [vec![], vec![1; 4000], vec![7, 13, 100_000, 3, 5000]] {
            let mut r = Pieces(bytes.clone(), pieces.repeat(50), 0);
            let mut inbox = Inbox::new();
            let mut got = Vec::new();
            while let Ok(Got::Bytes(_)) = inbox.read(&mut r, &mut |f| got.push(f)).unwrap() {}
            assert_eq!(got.len(), sizes.len());
            for (i, f) in got.iter().enumerate() {
                assert!(
                    f.len() == sizes[i] && f.iter().all(|&b| b == i as u8),
                    "frame {i}"
                );
            }
            assert_eq!(inbox.buffered(), 0);
        }
    }

    #[test]
    fn bad_lengths_and_sequence_numbers_are_refused_and_partial_frames_counted() {
        let mut bytes = encode_frame(0, b"ok").unwrap();
        bytes.extend(encode_frame(2, b"skipped one").unwrap());
        let mut inbox = Inbox::new();
        let e = inbox
            .read(&mut Pieces(bytes, vec![], 0), &mut |_| {})
            .unwrap_err();
        assert_eq!(
            e,
            WireError::OutOfSequence {
                got: 2,
                expected: 1
            }
        );

        let mut long = encode_frame(0, b"").unwrap();
        long[..4].copy_from_slice(&(MAX_FRAME + 1).to_le_bytes());
        let e = Inbox::new()
            .read(&mut Pieces(long, vec![], 0), &mut |_| {})
            .unwrap_err();
        assert_eq!(e, WireError::FrameTooLong(MAX_FRAME + 1));

        let frame = encode_frame(0, &[1u8; 100]).unwrap();
        let mut inbox = Inbox::new();
        let mut r = Pieces(frame[..40].to_vec(), vec![], 0);
        inbox
            .read(&mut r, &mut |_| panic!("incomplete"))
            .unwrap()
            .unwrap();
        assert_eq!(inbox.buffered(), 40);
    }
}
