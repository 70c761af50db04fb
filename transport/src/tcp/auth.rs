//! The job-secret part of the TCP handshake. With a secret, the caller's hello carries a
//! fresh nonce; the listener answers with its own nonce and its proof over both; the caller
//! checks that proof and sends its own in the confirm; the listener checks that. Either side
//! without a secret, facing one with, refuses with a sentence that says which side lacks it.
//! The secret never crosses the wire, and a hello replayed from an earlier handshake fails,
//! because the listener's nonce is new each time.
#![forbid(unsafe_code)]

use std::net::SocketAddr;

use super::TcpTransport;
use crate::error::{ErrorKind, TransportError};
use crate::secret::{Nonce, PROOF_BYTES, Proof, Role, Transcript, fresh_nonce};
use crate::wire::{CONFIRM, Hello, ListenHandle, WireError};

/// What a listener checks the caller's confirm against.
#[derive(Debug)]
pub(super) struct Expect {
    caller_nonce: Nonce,
    listener_nonce: Nonce,
    caller_rank: u32,
}

impl Expect {
    /// Bytes of the confirm it expects.
    pub(super) fn confirm_len(e: Option<&Expect>) -> usize {
        CONFIRM.len() + if e.is_some() { PROOF_BYTES } else { 0 }
    }
}

/// Caller: the nonce for our hello, if this transport holds a secret.
pub(super) fn caller_nonce(t: &TcpTransport) -> Result<Option<Nonce>, TransportError> {
    t.opts
        .secret
        .as_ref()
        .map(|_| fresh_nonce().map_err(|e| TransportError::invalid(e.to_string())))
        .transpose()
}

/// Caller: checks the listener's hello `h` against our secret and returns the confirm to
/// send (with our proof when there is a secret).
pub(super) fn caller_confirm(
    t: &TcpTransport,
    to: &ListenHandle,
    ours: Option<&Nonce>,
    h: &Hello,
) -> Result<Vec<u8>, TransportError> {
    let refuse = |why| {
        TransportError::wire(
            format!("rank {} at {}", to.rank, to.addr),
            WireError::Auth(why),
        )
    };
    let mut confirm = CONFIRM.to_vec();
    match (&t.opts.secret, ours, &h.nonce) {
        (None, _, None) => {}
        (None, _, Some(_)) => {
            return Err(refuse(
                "rank 0 requires a job secret and this rank has none: export PTO_JOB_SECRET \
                 (the job's 32 hex digits) or pass --secret-file",
            ));
        }
        (Some(_), _, None) | (Some(_), None, _) => {
            return Err(refuse(
                "this rank holds a job secret and rank 0 runs without one: give every rank \
                 the same PTO_JOB_SECRET",
            ));
        }
        (Some(secret), Some(mine), Some(theirs)) => {
            let tr = Transcript {
                caller_nonce: mine,
                listener_nonce: theirs,
                run_id: &t.opts.run_id,
                caller_rank: t.opts.rank,
                listener_rank: h.rank,
            };
            let ok = h
                .proof
                .as_ref()
                .is_some_and(|p| secret.check(Role::Listener, &tr, p));
            if !ok {
                return Err(refuse(
                    "rank 0 does not prove the job secret: the ranks hold different secrets \
                     (or something else answers at rank 0's address)",
                ));
            }
            confirm.extend_from_slice(&secret.prove(Role::Caller, &tr));
        }
    }
    Ok(confirm)
}

/// A listener's answer to a caller's hello.
#[derive(Debug)]
pub(super) struct Answer {
    /// Our hello, as bytes.
    pub(super) bytes: Vec<u8>,
    /// What the caller's confirm must prove.
    pub(super) expect: Option<Expect>,
    /// The refusal to report once the answer is out.
    pub(super) refuse: Option<TransportError>,
}

/// Listener: our answer to the caller's hello `h` from `from`: a caller whose secret setting
/// differs from ours is told who we are first, then refused.
pub(super) fn listener_answer(
    t: &TcpTransport,
    from: SocketAddr,
    h: &Hello,
) -> Result<Answer, TransportError> {
    let mut ours = Hello::plain(t.opts.rank, t.opts.run_id.clone());
    let mut expect = None;
    let mut refuse = None;
    match (&t.opts.secret, &h.nonce) {
        (None, None) => {}
        (None, Some(_)) => {
            refuse = Some(refused(
                from,
                h.rank,
                "it holds a job secret and this rank runs without one",
            ))
        }
        (Some(_), None) => {
            // Tell it a secret is needed (a nonce, no proof), then refuse it.
            ours.nonce = Some(fresh_nonce().map_err(|e| TransportError::invalid(e.to_string()))?);
            refuse = Some(refused(from, h.rank, "it has no job secret"));
        }
        (Some(secret), Some(theirs)) => {
            let mine = fresh_nonce().map_err(|e| TransportError::invalid(e.to_string()))?;
            let tr = Transcript {
                caller_nonce: theirs,
                listener_nonce: &mine,
                run_id: &t.opts.run_id,
                caller_rank: h.rank,
                listener_rank: t.opts.rank,
            };
            ours.proof = Some(secret.prove(Role::Listener, &tr));
            ours.nonce = Some(mine);
            expect = Some(Expect {
                caller_nonce: *theirs,
                listener_nonce: mine,
                caller_rank: h.rank,
            });
        }
    }
    let bytes = ours
        .encode()
        .map_err(|e| TransportError::wire("our hello", e))?;
    Ok(Answer {
        bytes,
        expect,
        refuse,
    })
}

/// Listener: checks the caller's confirm (and its proof, when `expect` says there is one).
pub(super) fn listener_check(
    t: &TcpTransport,
    from: SocketAddr,
    peer: u32,
    expect: Option<&Expect>,
    confirm: &[u8],
) -> Result<(), TransportError> {
    if confirm.get(..CONFIRM.len()) != Some(&CONFIRM[..]) {
        let e = WireError::Invalid("the bytes after a hello are no confirm");
        let detail = format!("refused a caller from {from} claiming rank {peer}: {e}");
        return Err(TransportError::new(ErrorKind::Wire(e), true, detail));
    }
    let (Some(e), Some(secret)) = (expect, &t.opts.secret) else {
        return Ok(());
    };
    let proof: Option<Proof> = confirm.get(CONFIRM.len()..).and_then(|p| p.try_into().ok());
    let tr = Transcript {
        caller_nonce: &e.caller_nonce,
        listener_nonce: &e.listener_nonce,
        run_id: &t.opts.run_id,
        caller_rank: e.caller_rank,
        listener_rank: t.opts.rank,
    };
    if !proof.is_some_and(|p| secret.check(Role::Caller, &tr, &p)) {
        return Err(refused(
            from,
            peer,
            "its proof of the job secret is wrong: another job's secret, or a hello replayed \
             from an earlier handshake",
        ));
    }
    Ok(())
}

/// A caller refused for its secret; retryable, since the listener goes on and the real rank
/// may still come.
fn refused(from: SocketAddr, rank: u32, why: &'static str) -> TransportError {
    let detail = format!("refused a caller from {from} claiming rank {rank}: {why}");
    TransportError::new(ErrorKind::Wire(WireError::Auth(why)), true, detail)
}
