//! Kernel launches: arguments pushed by type, and the one `unsafe` launch every entry point
//! goes through.
use super::stream::Enqueue;
use crate::error::{Check, Result};
use cust::memory::{DeviceCopy, DeviceSlice};
use std::ffi::c_void;

/// Most parameters any kernel takes (sgemv's `&[f32]`s count two each).
const MAX_KERNEL_ARGS: usize = 16;

/// A kernel's arguments in the order of its parameter list, pushed by one method per
/// parameter type the kernels take. Each method stores exactly its type's bytes, so an
/// argument cannot be passed wider or narrower than the type its method names.
pub(crate) struct KernelArgs {
    /// One 8-byte cell per argument; a 4-byte value fills a cell's first 4 bytes.
    cells: [u64; MAX_KERNEL_ARGS],
    len: usize,
}

impl KernelArgs {
    pub(crate) fn new() -> KernelArgs {
        KernelArgs { cells: [0; MAX_KERNEL_ARGS], len: 0 }
    }

    /// A `&[T]` parameter: the slice's device address, then its length.
    pub(crate) fn slice<T: DeviceCopy>(&mut self, s: &DeviceSlice<T>) -> &mut KernelArgs {
        let (address, len) = raw(s);
        self.ptr(address).usize(len)
    }

    /// A `*mut T` or `*const T` parameter: a device address.
    pub(crate) fn ptr(&mut self, address: u64) -> &mut KernelArgs {
        self.push(&address.to_ne_bytes())
    }

    /// A `usize` parameter: 64 bits on the device.
    pub(crate) fn usize(&mut self, value: usize) -> &mut KernelArgs {
        self.push(&(value as u64).to_ne_bytes())
    }

    /// A `u32` parameter.
    pub(crate) fn u32(&mut self, value: u32) -> &mut KernelArgs {
        self.push(&value.to_ne_bytes())
    }

    /// An `f32` parameter.
    pub(crate) fn f32(&mut self, value: f32) -> &mut KernelArgs {
        self.push(&value.to_ne_bytes())
    }

    fn push(&mut self, bytes: &[u8]) -> &mut KernelArgs {
        assert!(self.len < MAX_KERNEL_ARGS, "a kernel takes at most {} parameters", MAX_KERNEL_ARGS);
        let mut cell = [0u8; 8];
        cell[..bytes.len()].copy_from_slice(bytes);
        self.cells[self.len] = u64::from_ne_bytes(cell);
        self.len += 1;
        self
    }

    /// The launch's parameter array (cust's convention: a pointer to each argument's value),
    /// valid while `self` is borrowed.
    fn pointers(&self) -> [*mut c_void; MAX_KERNEL_ARGS] {
        let mut pointers = [std::ptr::null_mut(); MAX_KERNEL_ARGS];
        for (p, cell) in pointers.iter_mut().zip(&self.cells) {
            *p = cell as *const u64 as *mut c_void;
        }
        pointers
    }
}

impl Enqueue<'_> {
    /// Enqueues entry point `entry` (an `entries` index) on this stream: `grid` blocks of
    /// `block` threads, taking `args`. The launch's result is checked; a fault in the kernel
    /// surfaces at the stream's next wait.
    ///
    /// # Safety
    /// The caller promises, for the entry point `entry` names:
    /// - `args` are its parameters in number, order and type (a `&[T]` pushed with
    ///   [`KernelArgs::slice`], a pointer with [`KernelArgs::ptr`]);
    /// - `grid` and `block` are a launch its `# Safety` section in `kernels/` allows;
    /// - every address in `args` is device-addressable memory that holds, for this grid, all
    ///   the kernel reads and writes through it, as aligned as its loads need and initialized
    ///   as its contract asks (e.g. zeroed counters);
    /// - that memory stays allocated until the kernel has run: it is this stream's scratch,
    ///   replaced or freed only after a wait on this stream, or buffers the entry point's
    ///   caller lent, whose `cuMemFree` waits for the device's work in flight.
    pub(crate) unsafe fn launch(&self, entry: usize, grid: u32, block: u32, args: &KernelArgs) -> Result<()> {
        let function = self.stream.shared.function(entry);
        let pointers = args.pointers();
        // SAFETY: the caller's promise above; `pointers` points into `args`, which outlives the
        // call (cuLaunchKernel copies the values before it returns).
        unsafe { self.stream.stream.launch(function, grid, block, 0, &pointers[..args.len]) }.check("cuLaunchKernel")
    }
}

/// The device address and length of a slice: how a kernel's `&[T]` parameter is passed.
fn raw<T: DeviceCopy>(s: &DeviceSlice<T>) -> (u64, usize) {
    (s.as_device_ptr().as_raw(), s.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cust::memory::DevicePointer;

    fn cell_bytes(args: &KernelArgs, i: usize) -> [u8; 8] {
        args.cells[i].to_ne_bytes()
    }

    #[test]
    fn each_argument_takes_its_own_type_size_in_order() {
        // SAFETY: the slice is only read for its address and length, never dereferenced.
        let s = unsafe { DeviceSlice::<f32>::from_raw_parts(DevicePointer::from_raw(0x7f00_0000_1000), 300) };
        let mut args = KernelArgs::new();
        args.slice(&s).u32(7).usize(1 << 40).f32(-1.5).ptr(0xdead_beef_0000);
        assert_eq!(args.len, 6);
        assert_eq!(args.cells[0], 0x7f00_0000_1000);
        assert_eq!(args.cells[1], 300);
        assert_eq!(cell_bytes(&args, 2), [7u32.to_ne_bytes(), [0; 4]].concat()[..]);
        assert_eq!(args.cells[3], 1 << 40);
        assert_eq!(cell_bytes(&args, 4), [(-1.5f32).to_ne_bytes(), [0; 4]].concat()[..]);
        assert_eq!(args.cells[5], 0xdead_beef_0000);
        for (i, (&p, cell)) in args.pointers().iter().zip(&args.cells).enumerate() {
            assert_eq!(p as *const u64, cell as *const u64, "argument {}", i);
        }
    }

    #[test]
    #[should_panic(expected = "at most 16 parameters")]
    fn a_seventeenth_argument_panics() {
        let mut args = KernelArgs::new();
        for i in 0..=MAX_KERNEL_ARGS {
            args.u32(i as u32);
        }
    }
}
