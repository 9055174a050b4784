#pragma once
// The bandwidth probe (kernels.md (e)): read, copy and triad over device buffers, 16-byte vector
// accesses at full occupancy. Callers time them with buffers far larger than L2 (validation.cpp
// uses at least 8 x L2, and flushes L2 between repeats). Details: bandwidth_probe.cu.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace quantplan::kernels {

// Reads `bytes` bytes of `src` (device, 16-byte aligned, bytes a multiple of 16) and folds them
// into a value that is written to *sink only if it equals an impossible pattern, so no load can
// be dropped. Moves `bytes` bytes.
void probe_read(const void* src, std::uint64_t bytes, std::uint32_t* sink, cudaStream_t stream);

// Reads `bytes` bytes of `src` like probe_read, but with loads that allocate in L2 with the normal
// replacement policy: reading a buffer larger than L2 evicts what was there (the timer's L2
// flush). Writes nothing (except *sink on the impossible pattern), so no dirty line is left whose
// write-back could land in a later timed window. Same preconditions as probe_read.
void l2_flush_read(const void* src, std::uint64_t bytes, std::uint32_t* sink, cudaStream_t stream);

// dst = src over `bytes` bytes (both 16-byte aligned, not overlapping). Moves 2 x bytes.
void probe_copy(void* dst, const void* src, std::uint64_t bytes, cudaStream_t stream);

// a = b + scalar c over `bytes` bytes of fp32 each (16-byte aligned). Moves 3 x bytes.
void probe_triad(float* a, const float* b, const float* c, float scalar, std::uint64_t bytes, cudaStream_t stream);

// Fills `bytes` bytes of device memory with a deterministic pattern derived from `seed`
// (uint32 words of a hash), used to initialise large validation buffers without host copies.
void fill_pattern(void* dst, std::uint64_t bytes, std::uint32_t seed, cudaStream_t stream);

// Fills `count` 16-bit values with bf16/fp16 bits of uniform numbers in [lo, hi) from `seed`
// (hash-based, deterministic). `bf16` selects the format.
void fill_uniform_half16(std::uint16_t* dst, std::int64_t count, bool bf16, float lo, float hi, std::uint32_t seed, cudaStream_t stream);

// Fills `count` bytes with hash bytes ANDed with `mask` (0xBF keeps E4M3 values finite and below 2;
// 0xFF gives any INT8 value).
void fill_masked_bytes(std::uint8_t* dst, std::int64_t count, std::uint8_t mask, std::uint32_t seed, cudaStream_t stream);

}  // namespace quantplan::kernels
