//! Element types as cudarc's buffers hold them, mapped onto the library's.
use cudakernels::TypedElement;

mod sealed {
    pub trait Sealed {}
}

/// An element type of the library's kernels as a cudarc buffer holds it. The integers, f32 and
/// f64 are the library's own; half 2's `f16` and `bf16` stand for the library's half 1.8 types,
/// which have the same size, alignment and bits. Sealed: the kernels read a buffer of `Self` as
/// one of `Self::Kernel`.
pub trait Element: Copy + sealed::Sealed {
    /// The library's type of the same bits.
    type Kernel: TypedElement;
    /// `v` as this type (the same bits).
    fn from_kernel(v: Self::Kernel) -> Self;
}

/// What the sums of `E` accumulate in: u64 for unsigned integers, i64 for signed ones, f32 for
/// f32, f16 and bf16, f64 for f64.
pub type Sum<E> = <<E as Element>::Kernel as TypedElement>::Sum;

macro_rules! same {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            type Kernel = $t;
            fn from_kernel(v: $t) -> $t {
                v
            }
        }
    )*};
}
same!(u8, i8, u16, i16, i32, u32, f32, f64);

macro_rules! half {
    ($($t:ident),*) => {$(
        impl sealed::Sealed for half::$t {}
        impl Element for half::$t {
            type Kernel = cudakernels::$t;
            fn from_kernel(v: cudakernels::$t) -> half::$t {
                half::$t::from_bits(v.to_bits())
            }
        }
        const _: () = assert!(
            std::mem::size_of::<half::$t>() == std::mem::size_of::<cudakernels::$t>()
                && std::mem::align_of::<half::$t>() == std::mem::align_of::<cudakernels::$t>()
        );
    )*};
}
half!(f16, bf16);

/// The library's (value, index) pair as `E`.
pub(crate) fn value_index<E: Element>(v: cudakernels::ValueIndex<E::Kernel>) -> cudakernels::ValueIndex<E> {
    cudakernels::ValueIndex { value: E::from_kernel(v.value), index: v.index }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_keep_their_bits() {
        for bits in [0u16, 0x8000, 0x3c00, 0x7c00, 0xfc00, 0x7e01, 0x0001, 0xffff] {
            assert_eq!(half::f16::from_kernel(cudakernels::f16::from_bits(bits)).to_bits(), bits);
            assert_eq!(half::bf16::from_kernel(cudakernels::bf16::from_bits(bits)).to_bits(), bits);
        }
        assert_eq!(half::bf16::from_kernel(cudakernels::bf16::from_f32(-1.5)), half::bf16::from_f32(-1.5));
    }

    #[test]
    fn pairs_keep_value_and_index() {
        let v = cudakernels::ValueIndex { value: cudakernels::f16::from_f32(2.5), index: 1 << 40 };
        let got = value_index::<half::f16>(v);
        assert_eq!((got.value.to_f32(), got.index), (2.5, 1 << 40));
        assert_eq!(value_index::<i16>(cudakernels::ValueIndex { value: -7, index: 3 }).value, -7);
    }

    #[test]
    fn sums_accumulate_as_the_library_does() {
        fn sum_name<E: Element>() -> &'static str {
            std::any::type_name::<Sum<E>>()
        }
        assert_eq!(sum_name::<u8>(), "u64");
        assert_eq!(sum_name::<i16>(), "i64");
        assert_eq!(sum_name::<half::bf16>(), "f32");
        assert_eq!(sum_name::<f64>(), "f64");
    }
}
