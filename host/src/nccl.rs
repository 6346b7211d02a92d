//! NCCL, opened at run time: `libnccl.so.2` is loaded with `dlopen` the first time multi-GPU
//! work asks for it, so builds need no NCCL and single-GPU programs never load it.
//!
//! Only the calls the library uses are bound; their C signatures are NCCL 2's stable ABI.
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
type ErrorStringFn = unsafe extern "C" fn(Status) -> *const c_char;
type CommInitAllFn = unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> Status;
type CommFn = unsafe extern "C" fn(Comm) -> Status;
/// `ncclAllReduce` (the `c_int` before the communicator is the op) and `ncclBroadcast` (the root).
type CollectiveFn = unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, Comm, RawStream) -> Status;
type AllGatherFn = unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, RawStream) -> Status;
type GroupFn = unsafe extern "C" fn() -> Status;

/// The bound entry points of one loaded `libnccl.so.2`. The library stays loaded for the
/// process's life (never `dlclose`d): NCCL's proxy threads may outlive a communicator.
pub struct Nccl {
    version: c_int,
    get_error_string: ErrorStringFn,
    comm_init_all: CommInitAllFn,
    comm_destroy: CommFn,
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
        let get_version = bind!("ncclGetVersion": unsafe extern "C" fn(*mut c_int) -> Status);
        let mut version = 0;
        // SAFETY: writes one int.
        if unsafe { get_version(&mut version) } != 0 || version < 20000 {
            return Err(unavailable(format!("version code {} is not NCCL 2", version)));
        }
        Ok(Nccl {
            version,
            get_error_string: bind!("ncclGetErrorString": ErrorStringFn),
            comm_init_all: bind!("ncclCommInitAll": CommInitAllFn),
            comm_destroy: bind!("ncclCommDestroy": CommFn),
            all_reduce: bind!("ncclAllReduce": CollectiveFn),
            broadcast: bind!("ncclBroadcast": CollectiveFn),
            all_gather: bind!("ncclAllGather": AllGatherFn),
            group_start: bind!("ncclGroupStart": GroupFn),
            group_end: bind!("ncclGroupEnd": GroupFn),
        })
    }

    /// NCCL's version code (major · 10000 + minor · 100 + patch for 2.9 and later).
    pub fn version(&self) -> i32 {
        self.version
    }

    fn check(&self, call: &'static str, status: Status) -> Result<()> {
        if status == 0 {
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

    /// Destroys a communicator made by [`Nccl::init_all`].
    ///
    /// # Safety
    /// `comm` is live and no work of it is still to be enqueued.
    pub unsafe fn destroy(&self, comm: Comm) -> Result<()> {
        // SAFETY: NCCL's `ncclCommDestroy` on a live communicator with no work left to enqueue
        // (the contract).
        self.check("ncclCommDestroy", unsafe { (self.comm_destroy)(comm) })
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

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a C string valid until the next dl call on this thread.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}
