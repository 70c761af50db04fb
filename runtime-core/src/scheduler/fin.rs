//! What a core's status report means for its two lanes: decoded once, here.
#![forbid(unsafe_code)]

use crate::ids::Token;
use crate::protocol::StatusWord;

/// What a status report tells about a core's running and pending lanes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LaneEvent {
    /// Nothing to retire: the word the scheduler already acted on, or the running token's ACK.
    Nothing,
    /// The running lane finished: its FIN, or the pending token's ACK.
    Running,
    /// Both lanes finished: the pending token's FIN.
    Both,
    /// A report no dispatched token explains: a token never given to the core, or one older
    /// than the core's last report.
    Unexplained,
}

/// Decodes `status` against `seen` (the last word acted on) and the core's lanes.
#[inline]
pub(crate) fn decode(
    status: StatusWord,
    seen: StatusWord,
    running: Option<Token>,
    pending: Option<Token>,
) -> LaneEvent {
    if status == seen {
        return LaneEvent::Nothing;
    }
    let t = status.token();
    match (running, pending) {
        (Some(r), _) if t == r && status.is_fin() => LaneEvent::Running,
        (Some(r), _) if t == r => LaneEvent::Nothing,
        (Some(_), Some(p)) if t == p && status.is_fin() => LaneEvent::Both,
        (Some(_), Some(p)) if t == p => LaneEvent::Running,
        _ => LaneEvent::Unexplained,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::LaneEvent::*;
    use super::*;

    const R: Token = Token::new(5);
    const P: Token = Token::new(6);

    fn at(status: StatusWord, seen: StatusWord) -> LaneEvent {
        decode(status, seen, Some(R), Some(P))
    }

    #[test]
    fn each_report_retires_exactly_the_lanes_it_proves_finished() {
        let old = StatusWord::fin(Token::new(4));
        assert_eq!(at(old, old), Nothing, "the word acted on before");
        assert_eq!(at(StatusWord::ack(R), old), Nothing);
        assert_eq!(at(StatusWord::fin(R), old), Running);
        assert_eq!(at(StatusWord::ack(P), old), Running, "the core moved on");
        assert_eq!(at(StatusWord::fin(P), old), Both);
        assert_eq!(
            decode(StatusWord::ack(P), old, Some(R), None),
            Unexplained,
            "a token never dispatched"
        );
    }

    #[test]
    fn reports_nobody_asked_for_are_unexplained() {
        let seen = StatusWord::fin(Token::new(4));
        assert_eq!(
            at(StatusWord::fin(Token::new(3)), seen),
            Unexplained,
            "older"
        );
        assert_eq!(
            at(StatusWord::fin(Token::new(9)), seen),
            Unexplained,
            "newer"
        );
        assert_eq!(at(StatusWord::NONE, seen), Unexplained, "reset under us");
        assert_eq!(
            decode(StatusWord::fin(R), seen, None, None),
            Unexplained,
            "an idle core"
        );
    }
}
