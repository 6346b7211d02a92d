//! [`NcclId`]: the unique id from which the ranks of one communicator are made, one process (or
//! thread) each. One rank makes it ([`Nccl::unique_id`](super::Nccl::unique_id)); the caller sends
//! it to the others by its own means (a file, a socket, MPI, the command line) as hex text or
//! bytes, and each calls [`Nccl::init_rank`](super::Nccl::init_rank) with it.
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// `NCCL_UNIQUE_ID_BYTES`: the size of `ncclUniqueId`, fixed by NCCL 2's ABI.
pub const NCCL_ID_BYTES: usize = 128;

/// `ncclUniqueId`, as C passes it by value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct NcclId {
    internal: [u8; NCCL_ID_BYTES],
}

impl NcclId {
    /// The id from its bytes, as [`NcclId::as_bytes`] gave them on the rank that made it.
    pub fn from_bytes(bytes: [u8; NCCL_ID_BYTES]) -> NcclId {
        NcclId { internal: bytes }
    }

    /// The id's bytes, to send to the other ranks.
    pub fn as_bytes(&self) -> &[u8; NCCL_ID_BYTES] {
        &self.internal
    }

    /// The id as 256 lowercase hex digits (also its `Display`).
    pub fn to_hex(&self) -> String {
        self.internal.iter().map(|b| format!("{:02x}", b)).collect()
    }

    /// The id from [`NcclId::to_hex`]'s text (either case). `Error::LengthMismatch` for text
    /// that is not 256 characters, `Error::Unsupported` for one that is not a hex digit.
    pub fn from_hex(text: &str) -> Result<NcclId> {
        let digits = text.as_bytes();
        if digits.len() != 2 * NCCL_ID_BYTES {
            return Err(Error::LengthMismatch {
                what: "NCCL unique id (hex digits)",
                expected: 2 * NCCL_ID_BYTES,
                actual: digits.len(),
            });
        }
        let mut internal = [0u8; NCCL_ID_BYTES];
        for (byte, pair) in internal.iter_mut().zip(digits.chunks(2)) {
            *byte = hex_digit(pair[0])? << 4 | hex_digit(pair[1])?;
        }
        Ok(NcclId { internal })
    }
}

fn hex_digit(c: u8) -> Result<u8> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(Error::Unsupported { what: format!("an NCCL unique id holding {:?}, not a hex digit", c as char) }),
    }
}

impl fmt::Display for NcclId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Shows the length only: an id is a credential to join a communicator.
impl fmt::Debug for NcclId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NcclId({} bytes)", NCCL_ID_BYTES)
    }
}

impl FromStr for NcclId {
    type Err = Error;
    fn from_str(text: &str) -> Result<NcclId> {
        NcclId::from_hex(text)
    }
}

/// `(nranks, rank)` as NCCL takes them, for rank `rank` of a communicator of `nranks`:
/// `Error::Unsupported` for no ranks, `Error::TooLarge` for a rank outside `0..nranks` or more
/// ranks than a C `int` counts.
pub fn rank_args(nranks: usize, rank: usize) -> Result<(i32, i32)> {
    if nranks == 0 {
        return Err(Error::Unsupported { what: "a communicator of no ranks".into() });
    }
    let most = i32::MAX as usize;
    if nranks > most {
        return Err(Error::TooLarge { what: "NCCL ranks", len: nranks, max: most });
    }
    if rank >= nranks {
        return Err(Error::TooLarge { what: "NCCL rank", len: rank, max: nranks - 1 });
    }
    Ok((nranks as i32, rank as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NcclId {
        let mut bytes = [0u8; NCCL_ID_BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151).wrapping_add(7);
        }
        NcclId::from_bytes(bytes)
    }

    #[test]
    fn ids_round_trip_through_hex_and_bytes() {
        let id = sample();
        let hex = id.to_hex();
        assert_eq!(hex.len(), 2 * NCCL_ID_BYTES);
        assert_eq!(hex, id.to_string());
        assert_eq!(NcclId::from_hex(&hex).unwrap(), id);
        assert_eq!(hex.to_uppercase().parse::<NcclId>().unwrap(), id);
        assert_eq!(NcclId::from_bytes(*id.as_bytes()), id);
        assert_eq!(&hex[..4], format!("{:02x}{:02x}", id.as_bytes()[0], id.as_bytes()[1]));
        assert!(!format!("{:?}", id).contains(&hex[..8]), "Debug shows no bytes");
    }

    #[test]
    fn malformed_ids_are_refused() {
        let hex = sample().to_hex();
        for bad in [&hex[..254], "", &format!("{}00", hex)[..]] {
            assert!(
                matches!(NcclId::from_hex(bad), Err(Error::LengthMismatch { expected: 256, actual, .. }) if actual == bad.len()),
                "{} digits",
                bad.len()
            );
        }
        let mut not_hex = hex.clone().into_bytes();
        not_hex[77] = b'g';
        let not_hex = String::from_utf8(not_hex).unwrap();
        assert!(matches!(NcclId::from_hex(&not_hex), Err(Error::Unsupported { .. })));
        // A multi-byte character of the right byte length is refused too, not split.
        let wide = format!("é{}", &hex[2..]);
        assert_eq!(wide.len(), 256);
        assert!(matches!(NcclId::from_hex(&wide), Err(Error::Unsupported { .. })));
    }

    #[test]
    fn ranks_are_checked_against_their_count() {
        assert_eq!(rank_args(1, 0).unwrap(), (1, 0));
        assert_eq!(rank_args(8, 7).unwrap(), (8, 7));
        assert!(matches!(rank_args(0, 0), Err(Error::Unsupported { .. })));
        assert!(matches!(rank_args(2, 2), Err(Error::TooLarge { len: 2, max: 1, .. })));
        assert!(matches!(rank_args(1, usize::MAX), Err(Error::TooLarge { max: 0, .. })));
        let huge = i32::MAX as usize + 1;
        assert!(matches!(rank_args(huge, 0), Err(Error::TooLarge { what: "NCCL ranks", .. })));
    }
}
