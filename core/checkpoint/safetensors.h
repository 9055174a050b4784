#pragma once
// The safetensors container, read strictly and header-only.
//
// Layout (huggingface/safetensors README): an 8-byte little-endian u64 n, n bytes of UTF-8 JSON
// header, then the byte buffer the header's data_offsets point into. The reader follows the
// official loader's checks (SafeTensors::read_metadata and Metadata::validate in
// safetensors/src/tensor.rs, summarised in ../shared/reference/checkpoint-formats.md §0): header
// length bound, exact file length, sorted and contiguous offsets, sizes equal to shape x dtype,
// overflow checks. It never reads the payload and never allocates more than the bounded header.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quantplan {

// Largest header the official loader accepts (MAX_HEADER_SIZE), bytes.
inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

// Bytes of the little-endian header length that opens every file.
inline constexpr std::uint64_t kSafetensorsLengthPrefixBytes = 8;

// The element types a safetensors header may name (v0.7.0 plus HEAD's two FNUZ types).
enum class SafetensorsDtype : std::uint8_t {
    Bool, F4, F6E2M3, F6E3M2, U8, I8, F8E5M2, F8E4M3, F8E8M0, I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, U64,
    F8E4M3Fnuz, F8E5M2Fnuz,
};

// One row of the dtype table: the spelling in the header and the bits per element.
struct SafetensorsDtypeTraits {
    SafetensorsDtype dtype;
    std::string_view name;  // as the header spells it, e.g. "BF16", "F8_E4M3"
    int bits;               // bits per element
};

// The traits of `dtype`.
const SafetensorsDtypeTraits& safetensors_dtype_traits(SafetensorsDtype dtype);

// The header spelling of `dtype` ("BF16").
inline std::string_view safetensors_dtype_name(SafetensorsDtype dtype) { return safetensors_dtype_traits(dtype).name; }

// The dtype spelled `name` exactly as a header writes it, or nullopt.
std::optional<SafetensorsDtype> parse_safetensors_dtype(std::string_view name);

// One tensor entry of a header. Offsets are relative to the start of the byte buffer.
struct SafetensorsTensor {
    std::string name;
    SafetensorsDtype dtype = SafetensorsDtype::U8;
    std::vector<std::int64_t> shape;   // may be empty (0-rank scalar)
    std::uint64_t begin_offset = 0;    // first byte, relative to the buffer
    std::uint64_t end_offset = 0;      // one past the last byte

    // Bytes of the tensor's data.
    std::uint64_t byte_count() const { return end_offset - begin_offset; }
};

// A validated header and the file it came from.
struct SafetensorsHeader {
    std::uint64_t header_length_bytes = 0;     // n, the JSON header's length
    std::uint64_t file_bytes = 0;              // whole file
    std::map<std::string, std::string> metadata;  // __metadata__
    std::vector<SafetensorsTensor> tensors;    // sorted by offset

    // Bytes the container adds to the tensors: the length prefix and the header.
    std::uint64_t overhead_bytes() const { return kSafetensorsLengthPrefixBytes + header_length_bytes; }
    // Bytes of the byte buffer (sum of all tensors).
    std::uint64_t data_bytes() const { return file_bytes - overhead_bytes(); }
};

// Validates a file given its first bytes (`file_prefix`, at least the 8-byte prefix and the header;
// anything after is ignored) and its total length `file_bytes`. Throws Error(source, ...) with the
// official loader's error name (HeaderTooSmall, HeaderTooLarge, InvalidHeaderLength, InvalidHeader,
// InvalidHeaderDeserialization, InvalidOffset, TensorInvalidInfo, MisalignedSlice,
// ValidationOverflow, MetadataIncompleteBuffer) in the message.
SafetensorsHeader parse_safetensors_header(std::string_view file_prefix, std::uint64_t file_bytes, const std::string& source);

// Reads and validates the header of the file at `path` without reading its payload: 8 bytes, then
// at most kSafetensorsMaxHeaderBytes (and never more than the file holds). Throws Error naming the path.
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path);

// A tensor to write: name, dtype, shape and optionally its bytes (zeros when empty).
struct SafetensorsEntry {
    std::string name;
    SafetensorsDtype dtype = SafetensorsDtype::U8;
    std::vector<std::int64_t> shape;
    std::string data;  // exactly the tensor's byte count, or empty for zeros
};

// Encodes a whole file as the official writer does: tensors ordered by dtype alignment (widest
// first) then name, the header padded with spaces to a multiple of 8. Throws Error for a negative
// dimension, a size that overflows, a duplicate name or data of the wrong length.
std::string encode_safetensors(const std::vector<SafetensorsEntry>& tensors, const std::map<std::string, std::string>& metadata = {});

}  // namespace quantplan
