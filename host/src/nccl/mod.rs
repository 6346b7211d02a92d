//! NCCL, opened at run time: `libnccl.so.2` is loaded with `dlopen` the first time multi-GPU
//! work asks for it, so builds need no NCCL and single-GPU programs never load it.
//!
//! Only the calls the library uses are bound; their C signatures are NCCL 2's stable ABI. It
//! takes NCCL 2.4 or newer ([`MINIMUM_VERSION`]). Communicators are made either all at once in
//! one process ([`Nccl::init_all`]) or one rank per process from a [`NcclId`]
//! ([`Nccl::init_rank`]).
mod id;

pub use id::{rank_args, NcclId, NCCL_ID_BYTES};

use crate::error::{Error, Result};
use std::ffi::{c_void, CStr, CString};
use std::os::raw::{c_char, c_int};

/// The library's file name, as `dlopen` looks it up (the system library path).
pub const NCCL_LIBRARY: &str = "libnccl.so.2";

/// `ncclComm_t`.
pub type Comm = *mut c_void;
/// `cudaStream_t`, the same handle as the driver API's `CUstream`.
pub type RawStream = *mut c_void;

/// `ncclDataType_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum DataType {
    I8 = 0,
    U8 = 1,
    I32 = 2,
    U32 = 3,
    I64 = 4,
    U64 = 5,
    F32 = 7,
    F64 = 8,
}

/// `ncclRedOp_t` (the built-in ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum RedOp {
    Sum = 0,
    Max = 2,
    Min = 3,
}

type Status = c_int;
/// `ncclSuccess`.
const SUCCESS: Status = 0;
/// `ncclInProgress`: a non-blocking communicator's call still under way, not an error.
const IN_PROGRESS: Status = 7;
type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;
type CommInitAllFn = unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> Status;
type GetUniqueIdFn = unsafe extern "C" fn(*mut NcclId) -> Status;
/// `ncclCommInitRank(comm*, nranks, ncclUniqueId by value, rank)`.
type CommInitRankFn = unsafe extern "C" fn(*mut Comm, c_int, NcclId, c_int) -> Status;
type CommFn = unsafe extern "C" fn(Comm) -> Status;
type AsyncErrorFn = unsafe extern "C" fn(Comm, *mut Status) -> Status;
/// `ncclAllReduce` (the `c_int` before the communicator is the op) and `ncclBroadcast` (the root).
type CollectiveFn = unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, RawStream) -> Status;
type AllGatherFn = unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, RawStream) -> Status;
type GroupFn = unsafe extern "C" fn() -> Status;
type GetVersionFn = unsafe extern "C" fn(*mut c_int) -> Status;

/// The bound entry points of one loaded `libnccl.so.2`. The library stays loaded for the
/// process's life (never `dlclose`d): NCCL's proxy threads may outlive a communicator.
pub struct Nccl {
    version: NcclVersion,
    get_error_string: ErrorStringFn,
    comm_init_all: CommInitAllFn,
    get_unique_id: GetUniqueIdFn,
    comm_init_rank: CommInitRankFn,
    comm_destroy: CommFn,
    comm_abort: CommFn,
    comm_get_async_error: AsyncErrorFn,
    all_reduce: CollectiveFn,
    broadcast: CollectiveFn,
    all_gather: AllGatherFn,
    group_start: GroupFn,
    group_end: GroupFn,
}

// SAFETY: the function pointers are immutable after loading; NCCL's calls are
// thread-safe as long as each communicator is used by one thread at a time (the callers').
unsafe impl Send for Nccl {}
unsafe impl Sync for Nccl {}

impl Nccl {
    /// Loads [`NCCL_LIBRARY`]; `Error::NcclUnavailable` where it is absent or incomplete.
    pub fn load() -> Result<Nccl> {
        Nccl::load_from(NCCL_LIBRARY)
    }

    /// Loads the NCCL library `file` (a name `dlopen` searches for, or a path).
    pub fn load_from(file: &str) -> Result<Nccl> {
        let unavailable = |reason: String| Error::NcclUnavailable { library: file.to_string(), reason };
        let name = CString::new(file).map_err(|_| unavailable("the name holds a NUL byte".into()))?;
        // SAFETY: dlopen with a valid C string; the handle is checked before use.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(unavailable(dl_error()));
        }
        let symbol = |name: &str| -> Result<*mut c_void> {
            let c = CString::new(name).expect("symbol names hold no NUL");
            // SAFETY: `handle` is a live dlopen handle.
            let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
            if p.is_null() {
                Err(unavailable(format!("it lacks {} ({})", name, dl_error())))
            } else {
                Ok(p)
            }
        };
        macro_rules! bind {
            ($name:literal: $ty:ty) => {
                // SAFETY: the symbol is NCCL's C function of this name, whose signature `$ty`
                // states (NCCL 2 ABI).
                unsafe { std::mem::transmute::<*mut c_void, $ty>(symbol($name)?) }
            };
        }
        let get_version = symbol("ncclGetVersion").map_err(|_| {
            unavailable(format!("it lacks ncclGetVersion (NCCL 2.3.5 and later have it), so it is {}", TOO_OLD))
        })?;
        // SAFETY: `ncclGetVersion(int*)`, NCCL's C function of that name.
        let get_version = unsafe { std::mem::transmute::<*mut c_void, GetVersionFn>(get_version) };
        let mut code = 0;
        // SAFETY: writes one int.
        let status = unsafe { get_version(&mut code) };
        if status != SUCCESS {
            return Err(unavailable(format!("ncclGetVersion failed with status {}", status)));
        }
        let version = NcclVersion::from_code(code);
        supported(version).map_err(unavailable)?;
        Ok(Nccl {
            version,
            get_error_string: bind!("ncclGetErrorString": ErrorStringFn),
            comm_init_all: bind!("ncclCommInitAll": CommInitAllFn),
            get_unique_id: bind!("ncclGetUniqueId": GetUniqueIdFn),
            comm_init_rank: bind!("ncclCommInitRank": CommInitRankFn),
            comm_destroy: bind!("ncclCommDestroy": CommFn),
            comm_abort: bind!("ncclCommAbort": CommFn),
            comm_get_async_error: bind!("ncclCommGetAsyncError": AsyncErrorFn),
            all_reduce: bind!("ncclAllReduce": CollectiveFn),
            broadcast: bind!("ncclBroadcast": CollectiveFn),
            all_gather: bind!("ncclAllGather": AllGatherFn),
            group_start: bind!("ncclGroupStart": GroupFn),
            group_end: bind!("ncclGroupEnd": GroupFn),
        })
    }

    /// The loaded NCCL's release.
    pub fn version(&self) -> NcclVersion {
        self.version
    }

    fn check(&self, call: &'static str, status: Status) -> Result<()> {
        if status == SUCCESS {
            return Ok(());
        }
        // SAFETY: NCCL returns a static string for any status.
        let message = unsafe { CStr::from_ptr((self.get_error_string)(status)) }.to_string_lossy().into_owned();
        Err(Error::Nccl { call, code: status, message })
    }

    /// One communicator per device of `ordinals`, rank i on `ordinals[i]` (one process).
    pub fn init_all(&self, ordinals: &[i32]) -> Result<Vec<Comm>> {
        let mut comms = vec![std::ptr::null_mut(); ordinals.len()];
        // SAFETY: `comms` has room for one communicator per device.
        self.check("ncclCommInitAll", unsafe {
            (self.comm_init_all)(comms.as_mut_ptr(), ordinals.len() as c_int, ordinals.as_ptr())
        })?;
        Ok(comms)
    }

    /// A new id for one communicator, made on one rank and sent by the caller to the others.
    pub fn unique_id(&self) -> Result<NcclId> {
        let mut id = NcclId::from_bytes([0; NCCL_ID_BYTES]);
        // SAFETY: writes one `ncclUniqueId`, which `NcclId` lays out (128 bytes, `repr(C)`).
        self.check("ncclGetUniqueId", unsafe { (self.get_unique_id)(&mut id) })?;
        Ok(id)
    }

    /// The communicator of rank `rank` of `nranks`, made from `id` on the current device (one
    /// per process, or per thread). Blocks until all `nranks` ranks have called it. Ranks are
    /// checked first ([`rank_args`]).
    pub fn init_rank(&self, id: &NcclId, nranks: usize, rank: usize) -> Result<Comm> {
        let (nranks, rank) = rank_args(nranks, rank)?;
        let mut comm = std::ptr::null_mut();
        // SAFETY: writes one communicator; the id is passed by value as C declares it.
        self.check("ncclCommInitRank", unsafe { (self.comm_init_rank)(&mut comm, nranks, *id, rank) })?;
        Ok(comm)
    }

    /// Destroys a communicator made by [`Nccl::init_all`] or [`Nccl::init_rank`].
    ///
    /// # Safety
    /// `comm` is live and no work of it is still to be enqueued.
    pub unsafe fn destroy(&self, comm: Comm) -> Result<()> {
        // SAFETY: NCCL's `ncclCommDestroy` on a live communicator with no work left to enqueue
        // (the contract).
        self.check("ncclCommDestroy", unsafe { (self.comm_destroy)(comm) })
    }

    /// Aborts a communicator made by [`Nccl::init_all`] or [`Nccl::init_rank`]: its operations still on the device
    /// quit, and its resources are freed.
    ///
    /// # Safety
    /// `comm` is live and is never used again (neither destroyed nor aborted a second time).
    pub unsafe fn abort(&self, comm: Comm) -> Result<()> {
        // SAFETY: NCCL's `ncclCommAbort` on a live communicator never used after (the contract).
        self.check("ncclCommAbort", unsafe { (self.comm_abort)(comm) })
    }

    /// `Err(Error::Nccl)` where NCCL has met an error while running `comm`'s work (a failed
    /// transport or proxy thread): its collectives may then never finish. Reads a flag.
    ///
    /// # Safety
    /// `comm` is live (made by [`Nccl::init_all`] or [`Nccl::init_rank`], neither destroyed nor aborted).
    pub unsafe fn async_error(&self, comm: Comm) -> Result<()> {
        let mut status = SUCCESS;
        // SAFETY: NCCL's `ncclCommGetAsyncError` on a live communicator (the contract); writes
        // one status.
        self.check("ncclCommGetAsyncError", unsafe { (self.comm_get_async_error)(comm, &mut status) })?;
        self.check(
            "ncclCommGetAsyncError (an asynchronous error)",
            if status == IN_PROGRESS { SUCCESS } else { status },
        )
    }

    /// Runs `calls` between `ncclGroupStart` and `ncclGroupEnd` (one call per rank of one
    /// collective, from one thread). The group ends even when a call fails.
    pub fn group(&self, calls: impl FnOnce() -> Result<()>) -> Result<()> {
        // SAFETY: plain NCCL calls with no arguments.
        self.check("ncclGroupStart", unsafe { (self.group_start)() })?;
        let result = calls();
        let end = self.check("ncclGroupEnd", unsafe { (self.group_end)() });
        result.and(end)
    }

    /// Enqueues an all-reduce of `count` elements on `stream`.
    ///
    /// # Safety
    /// `send` and `recv` are device buffers of this rank's device holding `count` elements of
    /// `dtype`, live until the stream has run the collective; `comm` and `stream` belong to the
    /// same device, whose context is current.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn all_reduce(
        &self,
        send: u64,
        recv: u64,
        count: usize,
        dtype: DataType,
        op: RedOp,
        comm: Comm,
        stream: RawStream,
    ) -> Result<()> {
        let (send, recv) = (send as *const c_void, recv as *mut c_void);
        // SAFETY: NCCL's `ncclAllReduce`, bound with its C signature, on device buffers of
        // `count` elements and a communicator and stream of the current device (the contract).
        self.check("ncclAllReduce", unsafe {
            (self.all_reduce)(send, recv, count, dtype as c_int, op as c_int, comm, stream)
        })
    }

    /// Enqueues a broadcast of `count` elements from rank `root` on `stream`.
    ///
    /// # Safety
    /// As [`Nccl::all_reduce`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn broadcast(
        &self,
        send: u64,
        recv: u64,
        count: usize,
        dtype: DataType,
        root: i32,
        comm: Comm,
        stream: RawStream,
    ) -> Result<()> {
        let (send, recv) = (send as *const c_void, recv as *mut c_void);
        // SAFETY: NCCL's `ncclBroadcast`, bound with its C signature, on device buffers of
        // `count` elements and a communicator and stream of the current device (the contract).
        self.check("ncclBroadcast", unsafe { (self.broadcast)(send, recv, count, dtype as c_int, root, comm, stream) })
    }

    /// Enqueues an all-gather of `count` elements per rank on `stream` (`recv` holds
    /// `count · ranks`, rank i's at `i · count`).
    ///
    /// # Safety
    /// As [`Nccl::all_reduce`].
    pub unsafe fn all_gather(
        &self,
        send: u64,
        recv: u64,
        count: usize,
        dtype: DataType,
        comm: Comm,
        stream: RawStream,
    ) -> Result<()> {
        let (send, recv) = (send as *const c_void, recv as *mut c_void);
        // SAFETY: NCCL's `ncclAllGather`, bound with its C signature, on a device buffer of
        // `count` elements, one of `count` per rank, and a communicator and stream of the
        // current device (the contract).
        self.check("ncclAllGather", unsafe { (self.all_gather)(send, recv, count, dtype as c_int, comm, stream) })
    }
}

/// An NCCL release, as decoded from its version code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

/// The oldest NCCL the library takes: 2.4 brought `ncclCommAbort` and `ncclCommGetAsyncError`.
pub const MINIMUM_VERSION: NcclVersion = NcclVersion { major: 2, minor: 4, patch: 0 };

/// What a release before [`MINIMUM_VERSION`] is, for messages.
const TOO_OLD: &str =
    "older than NCCL 2.4, the first with ncclCommAbort and ncclCommGetAsyncError (the waits on the ranks rest on them)";

impl NcclVersion {
    /// Decodes `ncclGetVersion`'s code (`NCCL_VERSION_CODE`): major · 1000 + minor · 100 + patch
    /// up to 2.8, major · 10000 + minor · 100 + patch from 2.9 (the first code ≥ 10000).
    pub fn from_code(code: i32) -> NcclVersion {
        let code = code.max(0) as u32;
        let major_unit = if code >= 10_000 { 10_000 } else { 1000 };
        NcclVersion { major: code / major_unit, minor: code % major_unit / 100, patch: code % 100 }
    }
}

impl std::fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// `Err(reason)` for a release older than [`MINIMUM_VERSION`].
fn supported(version: NcclVersion) -> std::result::Result<(), String> {
    if version < MINIMUM_VERSION {
        return Err(format!("it is NCCL {}: {}", version, TOO_OLD));
    }
    Ok(())
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a C string valid until the next dl call on this thread.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> NcclVersion {
        NcclVersion { major, minor, patch }
    }

    #[test]
    fn version_codes_decode_in_both_encodings() {
        // Up to 2.8: major · 1000 + minor · 100 + patch.
        assert_eq!(NcclVersion::from_code(2708), v(2, 7, 8));
        assert_eq!(NcclVersion::from_code(2304), v(2, 3, 4));
        assert_eq!(NcclVersion::from_code(2899), v(2, 8, 99));
        // From 2.9: major · 10000 + minor · 100 + patch.
        assert_eq!(NcclVersion::from_code(20900), v(2, 9, 0));
        assert_eq!(NcclVersion::from_code(21803), v(2, 18, 3));
        assert_eq!(NcclVersion::from_code(22803), v(2, 28, 3));
        assert_eq!(NcclVersion::from_code(30102), v(3, 1, 2));
        assert_eq!(v(2, 28, 3).to_string(), "2.28.3");
    }

    #[test]
    fn releases_before_2_4_are_refused_with_their_version() {
        let old = supported(NcclVersion::from_code(2306)).unwrap_err();
        assert!(old.contains("NCCL 2.3.6") && old.contains("older than NCCL 2.4"), "{}", old);
        for code in [2402, 2708, 2804, 21803, 22803] {
            assert_eq!(supported(NcclVersion::from_code(code)), Ok(()), "code {}", code);
        }
        assert!(v(2, 9, 0) > v(2, 8, 99) && v(2, 10, 0) > v(2, 9, 9));
    }
}
