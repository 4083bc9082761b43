// Software prefetch, the one thing the standard library does not offer: this target is compiled with
// `-parse-stdlib` (Package.swift) so it can reach LLVM's `llvm.prefetch` intrinsic through the `Builtin`
// module. The function is transparent: it is inlined into its callers (the kernel families' products)
// and compiles to one instruction (`prefetcht0` on x86-64, part of the baseline ISA; `prfm` on arm64).
import Swift

/// Asks the CPU to start loading the cache line holding `address` into all cache levels, without
/// waiting for it and without faulting when the address is not mapped.
@_transparent
public func prefetch(_ address: UnsafeRawPointer) {
    // (address, read = 0, locality 3 = keep in every level, data cache = 1)
    Builtin.int_prefetch_RawPointer(address._rawValue, Int32(0)._value, Int32(3)._value, Int32(1)._value)
}

/// Asks the CPU to start loading the cache line holding `address` into L2 (and L3) but not L1:
/// `prefetcht1` on x86-64. For streams larger than L1 that are read again from L2: the transposed
/// Winograd products' filter blocks (32 KB, all of Zen 4's L1) are read once per panel of tiles, and
/// prefetching the next block into L1 evicted the block being multiplied (a simulation of yolov4-tiny's
/// layer 26 products: 4.42 ms with `prefetch`, 3.64 ms with this, 4.12 ms with none).
@_transparent
public func prefetchIntoL2(_ address: UnsafeRawPointer) {
    // (address, read = 0, locality 2 = L2 and outer levels, data cache = 1)
    Builtin.int_prefetch_RawPointer(address._rawValue, Int32(0)._value, Int32(2)._value, Int32(1)._value)
}
