//! Buffers a caller lends to a launch, checked before any kernel runs: aligned for their
//! elements, and device memory that the launching device's primary context reaches.
use super::queue::driver;
use crate::error::{Check, Error, Result};
use cust::memory::{DeviceCopy, DeviceSlice};
use cust::sys::{CUmemorytype, CUpointer_attribute, CUresult};
use std::ffi::c_void;

/// A caller's buffer that a launch reads or writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Lent {
    /// The parameter's name in errors ("input", "A", "y", "out").
    pub(crate) what: &'static str,
    pub(crate) address: u64,
    pub(crate) bytes: usize,
    /// Alignment of its element type: what the kernels' loads and stores need.
    pub(crate) align: usize,
}

impl Lent {
    pub(crate) fn of<T: DeviceCopy>(what: &'static str, s: &DeviceSlice<T>) -> Lent {
        Lent {
            what,
            address: s.as_device_ptr().as_raw(),
            bytes: s.len() * std::mem::size_of::<T>(),
            align: std::mem::align_of::<T>(),
        }
    }

    /// `Error::Misaligned` unless the address is a multiple of the element alignment (a view
    /// built with unsafe code may not be; a misaligned access would fault the context).
    pub(crate) fn check_alignment(&self) -> Result<()> {
        if self.address % self.align as u64 != 0 {
            return Err(Error::Misaligned { what: self.what, required: self.align, address: self.address });
        }
        Ok(())
    }
}

/// `Overlap` when output `what`'s bytes `[out.0, out.1)` meet `with`'s (both non-empty).
pub(crate) fn check_overlap(
    what: &'static str,
    out: (u64, u64),
    with: (u64, u64),
    with_name: &'static str,
) -> Result<()> {
    if out.0 < out.1 && with.0 < with.1 && out.0 < with.1 && with.0 < out.1 {
        return Err(Error::Overlap { what, with: with_name });
    }
    Ok(())
}

/// The bytes `[start, end)` a slice covers.
pub(crate) fn byte_span<T: DeviceCopy>(s: &DeviceSlice<T>) -> (u64, u64) {
    let start = s.as_device_ptr().as_raw();
    (start, start.saturating_add((s.len() * std::mem::size_of::<T>()) as u64))
}

/// What the driver knows of an address (`cuPointerGetAttributes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Residence {
    /// A `CUmemorytype` as a number; 0 where the driver knows no allocation there (pageable
    /// host memory, a stack address, an unmapped address).
    pub(crate) memory_type: u32,
    pub(crate) managed: bool,
    /// The device the memory was allocated on.
    pub(crate) ordinal: i32,
    /// The context it was allocated in, as a number; 0 for memory of no one context
    /// (stream-ordered pools).
    pub(crate) context: usize,
}

/// The launching device: the one a lent buffer must be on, and the context it must be in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Owner {
    pub(crate) ordinal: u32,
    pub(crate) context: usize,
}

/// Whether the owner's kernels may access `lent`, which lies at `at`:
/// - memory the driver does not know (pageable host memory, unmapped addresses):
///   `Error::NotDeviceMemory`;
/// - managed memory: accepted (the driver makes it reachable from every device);
/// - page-locked host memory: accepted (with unified addressing, which every device the
///   library supports has on 64-bit Linux, it is reachable from the device at its host address);
/// - device memory of another device: `Error::WrongDevice`;
/// - device memory of this device allocated in another context (`cuCtxCreate`), which the
///   primary context does not map: `Error::ForeignContext`.
pub(crate) fn verdict(lent: &Lent, at: Residence, owner: Owner) -> Result<()> {
    let (what, address) = (lent.what, lent.address);
    if at.memory_type == 0 {
        return Err(Error::NotDeviceMemory { what, address });
    }
    if at.managed || at.memory_type == CUmemorytype::CU_MEMORYTYPE_HOST as u32 {
        return Ok(());
    }
    if at.memory_type != CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
        return Err(Error::NotDeviceMemory { what, address });
    }
    if at.ordinal != owner.ordinal as i32 {
        let actual = u32::try_from(at.ordinal).unwrap_or(u32::MAX);
        return Err(Error::WrongDevice { what, expected: owner.ordinal, actual });
    }
    if at.context != 0 && at.context != owner.context {
        return Err(Error::ForeignContext { what, address });
    }
    Ok(())
}

/// Checks `lent` for a launch of `owner`: alignment, then one driver query. An empty buffer
/// passes: no kernel touches it (an empty cust buffer's address is null).
pub(crate) fn check(lent: &Lent, owner: Owner) -> Result<()> {
    if lent.bytes == 0 {
        return Ok(());
    }
    lent.check_alignment()?;
    verdict(lent, residence(lent.address)?, owner)
}

/// What the driver knows of `address`, in one call. The driver answers for any address, also
/// one it knows nothing of (memory type 0), rather than failing; should it refuse the address
/// instead (`CUDA_ERROR_INVALID_VALUE`), that too is an address it does not know.
fn residence(address: u64) -> Result<Residence> {
    let (mut memory_type, mut managed, mut ordinal) = (0u32, 0u32, -1i32);
    let mut context: cust::sys::CUcontext = std::ptr::null_mut();
    let mut attributes = [
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
    ];
    let mut data: [*mut c_void; 4] = [
        &mut memory_type as *mut u32 as *mut c_void,
        &mut managed as *mut u32 as *mut c_void,
        &mut ordinal as *mut i32 as *mut c_void,
        &mut context as *mut cust::sys::CUcontext as *mut c_void,
    ];
    // SAFETY: `data[i]` points to a live value of the type attribute `i` writes (a CUmemorytype
    // and the managed flag as 32-bit words, the ordinal as an int, a context handle), and both
    // arrays hold the 4 entries the call is told of.
    let result = unsafe { cust::sys::cuPointerGetAttributes(4, attributes.as_mut_ptr(), data.as_mut_ptr(), address) };
    match result {
        CUresult::CUDA_SUCCESS => {}
        CUresult::CUDA_ERROR_INVALID_VALUE => memory_type = 0,
        _ => driver(result).check("cuPointerGetAttributes")?,
    }
    Ok(Residence { memory_type, managed: managed != 0, ordinal, context: context as usize })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cust::memory::DevicePointer;

    const DEVICE: u32 = CUmemorytype::CU_MEMORYTYPE_DEVICE as u32;
    const HOST: u32 = CUmemorytype::CU_MEMORYTYPE_HOST as u32;
    const OWNER: Owner = Owner { ordinal: 1, context: 0x5000 };

    fn lent(address: u64, align: usize) -> Lent {
        Lent { what: "input", address, bytes: 64, align }
    }

    fn at(memory_type: u32, managed: bool, ordinal: i32, context: usize) -> Residence {
        Residence { memory_type, managed, ordinal, context }
    }

    #[test]
    fn a_view_of_a_slice_carries_its_address_bytes_and_element_alignment() {
        // SAFETY: the slice is only read for its address and length, never dereferenced.
        let s = unsafe { DeviceSlice::<f64>::from_raw_parts(DevicePointer::from_raw(0x7f00_0000_1008), 5) };
        assert_eq!(Lent::of("x", &s), Lent { what: "x", address: 0x7f00_0000_1008, bytes: 40, align: 8 });
    }

    #[test]
    fn an_address_off_its_element_alignment_is_refused() {
        assert_eq!(lent(0x7f00_0000_1004, 4).check_alignment(), Ok(()));
        assert_eq!(
            lent(0x7f00_0000_1001, 4).check_alignment(),
            Err(Error::Misaligned { what: "input", required: 4, address: 0x7f00_0000_1001 })
        );
        assert_eq!(
            lent(0x7f00_0000_1004, 8).check_alignment(),
            Err(Error::Misaligned { what: "input", required: 8, address: 0x7f00_0000_1004 })
        );
        assert_eq!(lent(0x7f00_0000_1003, 1).check_alignment(), Ok(()));
    }

    #[test]
    fn device_memory_of_the_owner_passes_and_anything_else_gets_its_typed_error() {
        let l = lent(0x7f00_0000_1000, 4);
        let not_device = Err(Error::NotDeviceMemory { what: "input", address: 0x7f00_0000_1000 });
        assert_eq!(verdict(&l, at(DEVICE, false, 1, 0x5000), OWNER), Ok(()));
        assert_eq!(verdict(&l, at(DEVICE, false, 1, 0), OWNER), Ok(()), "pool memory has no context");
        assert_eq!(verdict(&l, at(0, false, 0, 0), OWNER), not_device, "unknown to the driver");
        assert_eq!(verdict(&l, at(HOST, false, 1, 0x5000), OWNER), Ok(()), "page-locked host memory");
        assert_eq!(
            verdict(&l, at(DEVICE, false, 0, 0x6000), OWNER),
            Err(Error::WrongDevice { what: "input", expected: 1, actual: 0 })
        );
        assert_eq!(
            verdict(&l, at(DEVICE, false, 1, 0x6000), OWNER),
            Err(Error::ForeignContext { what: "input", address: 0x7f00_0000_1000 })
        );
        assert_eq!(verdict(&l, at(DEVICE, true, 0, 0x6000), OWNER), Ok(()), "managed memory");
        assert_eq!(verdict(&l, at(HOST, true, 0, 0x6000), OWNER), Ok(()), "managed memory");
    }

    #[test]
    fn an_empty_buffer_passes_without_a_driver_call() {
        let empty = Lent { what: "input", address: 3, bytes: 0, align: 4 };
        assert_eq!(check(&empty, OWNER), Ok(()));
    }
}
