//! Two transports in one process: request ids never collide between their connections, and a
//! registration merged from both gives each region back to the transport it came from.

mod transport_util;

use pto_transport::{Conn, ErrorKind, Region, Transport};
use transport_util::*;

#[test]
fn request_ids_of_two_transports_never_collide() {
    let (a1, b1) = (tcp(1, "job-1"), tcp(0, "job-1"));
    let (a2, b2) = (tcp(1, "job-2"), tcp(0, "job-2"));
    let (mut l1, h1) = b1.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let (mut l2, h2) = b2.listen("127.0.0.1:0".parse().unwrap()).unwrap();
    let (mut c1, mut s1) = pair(&a1, &b1, &mut l1, &h1);
    let (mut c2, mut s2) = pair(&a2, &b2, &mut l2, &h2);
    // The first receive of each transport's first connection.
    let id1 = c1.irecv(64).unwrap().unwrap();
    let id2 = c2.irecv(64).unwrap().unwrap();
    assert_ne!(id1, id2, "two connections of one process handed out one id");
    // A message for the first connection arrives; the second's id asked of it is stale.
    let m = pattern(10, 1);
    let mr = b1.register(&[Region::of(&m)]).unwrap();
    send(&mut s1, &mr, &m).unwrap();
    let e = c1.test(id2).unwrap_err();
    assert_eq!(e.kind, ErrorKind::StaleRequest, "{e}");
    // And the real ids still stand for their own requests.
    let got = wait_for(&mut c1, id1).unwrap();
    assert_eq!(got, pto_transport::Completion::Received(m));
    let m2 = pattern(12, 2);
    let mr2 = b2.register(&[Region::of(&m2)]).unwrap();
    send(&mut s2, &mr2, &m2).unwrap();
    let got = wait_for(&mut c2, id2).unwrap();
    assert_eq!(got, pto_transport::Completion::Received(m2));
}

#[test]
fn a_registration_merged_across_transports_gives_each_region_back_to_its_own() {
    let (a, b) = (tcp(0, "job"), tcp(0, "job"));
    let (x, y) = (vec![1u8; 64], vec![2u8; 64]);
    let merged = a
        .register(&[Region::of(&x)])
        .unwrap()
        .merge(b.register(&[Region::of(&y)]).unwrap());
    assert_eq!(merged.regions().len(), 2);
    assert_eq!((a.live().registrations, b.live().registrations), (1, 1));
    // `x` is still held on `a`: a region overlapping it is refused there.
    let e = a.register(&[Region::of(&x[8..])]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::RegistrationConflict, "{e}");
    drop(merged);
    assert!(a.live().is_zero(), "a: {:?}", a.live());
    assert!(b.live().is_zero(), "b: {:?}", b.live());
    // Both regions are free again on their own transports.
    let again = (
        a.register(&[Region::of(&x[8..])]),
        b.register(&[Region::of(&y[8..])]),
    );
    assert!(again.0.is_ok() && again.1.is_ok());
}

/// Waits for request `id` of `c` to finish, bounded.
fn wait_for<C: Conn>(
    c: &mut C,
    id: pto_transport::ReqId,
) -> Result<pto_transport::Completion, pto_transport::TransportError> {
    let start = std::time::Instant::now();
    loop {
        if let Some(done) = c.test(id)? {
            return Ok(done);
        }
        assert!(start.elapsed() < LIMIT, "request {id:?} never completed");
        c.wait(std::time::Duration::from_millis(1));
    }
}
