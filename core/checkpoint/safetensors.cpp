#include "core/checkpoint/safetensors.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_guard.h"

namespace quantplan {
namespace {

using nlohmann::json;

constexpr std::array<SafetensorsDtypeTraits, 22> kDtypes{{
    {SafetensorsDtype::Bool, "BOOL", 8},
    {SafetensorsDtype::F4, "F4", 4},
    {SafetensorsDtype::F6E2M3, "F6_E2M3", 6},
    {SafetensorsDtype::F6E3M2, "F6_E3M2", 6},
    {SafetensorsDtype::U8, "U8", 8},
    {SafetensorsDtype::I8, "I8", 8},
    {SafetensorsDtype::F8E5M2, "F8_E5M2", 8},
    {SafetensorsDtype::F8E4M3, "F8_E4M3", 8},
    {SafetensorsDtype::F8E8M0, "F8_E8M0", 8},
    {SafetensorsDtype::I16, "I16", 16},
    {SafetensorsDtype::U16, "U16", 16},
    {SafetensorsDtype::F16, "F16", 16},
    {SafetensorsDtype::BF16, "BF16", 16},
    {SafetensorsDtype::I32, "I32", 32},
    {SafetensorsDtype::U32, "U32", 32},
    {SafetensorsDtype::F32, "F32", 32},
    {SafetensorsDtype::C64, "C64", 64},
    {SafetensorsDtype::F64, "F64", 64},
    {SafetensorsDtype::I64, "I64", 64},
    {SafetensorsDtype::U64, "U64", 64},
    {SafetensorsDtype::F8E4M3Fnuz, "F8_E4M3FNUZ", 8},
    {SafetensorsDtype::F8E5M2Fnuz, "F8_E5M2FNUZ", 8},
}};

constexpr bool table_matches_enum() {
    for (std::size_t i = 0; i < kDtypes.size(); ++i)
        if (static_cast<std::size_t>(kDtypes[i].dtype) != i) return false;
    return true;
}
static_assert(table_matches_enum(), "kDtypes must list SafetensorsDtype values in declaration order");
static_assert(kDtypes[static_cast<std::size_t>(SafetensorsDtype::BF16)].bits == 16);
static_assert(kDtypes[static_cast<std::size_t>(SafetensorsDtype::F4)].bits == 4);
static_assert(kDtypes[static_cast<std::size_t>(SafetensorsDtype::I32)].bits == 32);

[[noreturn]] void fail(const std::string& source, const std::string& kind, const std::string& message) {
    throw Error(source, message + " (" + kind + ")");
}

// An unsigned JSON integer, or nullopt for anything else (negative, float, string, ...).
std::optional<std::uint64_t> as_u64(const json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
    return std::nullopt;
}

// Element count x bits of a shape, or nullopt on overflow.
std::optional<std::uint64_t> checked_bits(const std::vector<std::int64_t>& shape, int bits_per_element) {
    std::uint64_t n = 1;
    for (std::int64_t d : shape)
        if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return std::nullopt;
    std::uint64_t bits = 0;
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(bits_per_element), &bits)) return std::nullopt;
    return bits;
}

std::string quoted(const std::string& name) { return "'" + clip_text(name) + "'"; }

SafetensorsTensor parse_entry(const std::string& name, const json& entry, const std::string& source) {
    const std::string what = "tensor " + quoted(name);
    if (!entry.is_object()) fail(source, "InvalidHeaderDeserialization", what + " is not an object");
    const auto dt = entry.find("dtype");
    const auto sh = entry.find("shape");
    const auto off = entry.find("data_offsets");
    if (dt == entry.end() || sh == entry.end() || off == entry.end())
        fail(source, "InvalidHeaderDeserialization", what + " needs dtype, shape and data_offsets");
    if (!dt->is_string()) fail(source, "InvalidHeaderDeserialization", what + ": dtype is not a string");
    const auto dtype = parse_safetensors_dtype(dt->get_ref<const std::string&>());
    if (!dtype) fail(source, "InvalidHeaderDeserialization", what + ": unknown dtype " + quoted(dt->get_ref<const std::string&>()));
    SafetensorsTensor t;
    t.name = name;
    t.dtype = *dtype;
    if (!sh->is_array()) fail(source, "InvalidHeaderDeserialization", what + ": shape is not a list");
    for (const json& d : *sh) {
        const auto v = as_u64(d);
        if (!v) fail(source, "InvalidHeaderDeserialization", what + ": shape holds " + clip_text(d.dump(), 40) + ", not a non-negative integer");
        if (*v > static_cast<std::uint64_t>(INT64_MAX)) fail(source, "ValidationOverflow", what + ": dimension " + std::to_string(*v) + " overflows");
        t.shape.push_back(static_cast<std::int64_t>(*v));
    }
    if (!off->is_array() || off->size() != 2) fail(source, "InvalidHeaderDeserialization", what + ": data_offsets is not a [begin, end] pair");
    const auto b = as_u64((*off)[0]);
    const auto e = as_u64((*off)[1]);
    if (!b || !e) fail(source, "InvalidHeaderDeserialization", what + ": data_offsets are not non-negative integers");
    t.begin_offset = *b;
    t.end_offset = *e;
    return t;
}

}  // namespace

const SafetensorsDtypeTraits& safetensors_dtype_traits(SafetensorsDtype dtype) { return kDtypes[static_cast<std::size_t>(dtype)]; }

std::optional<SafetensorsDtype> parse_safetensors_dtype(std::string_view name) {
    for (const auto& t : kDtypes)
        if (t.name == name) return t.dtype;
    return std::nullopt;
}

SafetensorsHeader parse_safetensors_header(std::string_view prefix, std::uint64_t file_bytes, const std::string& source) {
    if (file_bytes < kSafetensorsLengthPrefixBytes || prefix.size() < kSafetensorsLengthPrefixBytes)
        fail(source, "HeaderTooSmall", "file is " + std::to_string(file_bytes) + " bytes, shorter than the 8-byte header length");
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
    if (n > kSafetensorsMaxHeaderBytes)
        fail(source, "HeaderTooLarge", "header length " + std::to_string(n) + " is more than the " + std::to_string(kSafetensorsMaxHeaderBytes) + " bytes allowed");
    if (n > file_bytes - kSafetensorsLengthPrefixBytes)
        fail(source, "InvalidHeaderLength", "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(file_bytes) + "-byte file");
    if (prefix.size() - kSafetensorsLengthPrefixBytes < n)
        fail(source, "InvalidHeaderLength", "only " + std::to_string(prefix.size() - kSafetensorsLengthPrefixBytes) + " of the " + std::to_string(n) + " header bytes could be read");
    const std::string_view text = prefix.substr(kSafetensorsLengthPrefixBytes, static_cast<std::size_t>(n));
    if (!is_valid_utf8(text)) fail(source, "InvalidHeader", "header is not UTF-8");

    json root;
    try {
        root = parse_untrusted_json(text, source, true);
    } catch (const Error& e) {
        fail("", "InvalidHeaderDeserialization", e.what());
    }
    if (!root.is_object()) fail(source, "InvalidHeaderDeserialization", "header is not a JSON object");

    SafetensorsHeader h;
    h.header_length_bytes = n;
    h.file_bytes = file_bytes;
    h.tensors.reserve(root.size());
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() == "__metadata__") {
            if (it->is_null()) continue;
            if (!it->is_object()) fail(source, "InvalidHeaderDeserialization", "__metadata__ is not an object of strings");
            for (auto m = it->begin(); m != it->end(); ++m) {
                if (!m->is_string())
                    fail(source, "InvalidHeaderDeserialization", "__metadata__ value of " + quoted(m.key()) + " is not a string (the official loader reads a map of strings)");
                h.metadata.emplace(m.key(), m->get<std::string>());
            }
            continue;
        }
        h.tensors.push_back(parse_entry(it.key(), *it, source));
    }

    // Metadata::validate: sorted by offsets, contiguous from 0, sizes equal to shape x dtype.
    std::sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
        return a.begin_offset != b.begin_offset ? a.begin_offset < b.begin_offset : a.end_offset < b.end_offset;
    });
    std::uint64_t expected_begin = 0;
    for (const SafetensorsTensor& t : h.tensors) {
        const std::string what = "tensor " + quoted(t.name);
        if (t.begin_offset != expected_begin || t.end_offset < t.begin_offset) {
            const std::string why = t.begin_offset < expected_begin ? "overlaps the tensor before it"
                                    : t.begin_offset > expected_begin ? "leaves a hole after the tensor before it"
                                                                      : "ends before it begins";
            fail(source, "InvalidOffset", what + " at [" + std::to_string(t.begin_offset) + ", " + std::to_string(t.end_offset) + "] " + why);
        }
        const auto bits = checked_bits(t.shape, safetensors_dtype_traits(t.dtype).bits);
        if (!bits) fail(source, "ValidationOverflow", what + ": shape x dtype overflows 64 bits");
        if (*bits % 8 != 0) fail(source, "MisalignedSlice", what + ": " + std::to_string(*bits) + " bits is not a whole number of bytes");
        if (t.byte_count() != *bits / 8)
            fail(source, "TensorInvalidInfo", what + " holds " + std::to_string(t.byte_count()) + " bytes but its shape and " +
                                                  std::string(safetensors_dtype_name(t.dtype)) + " need " + std::to_string(*bits / 8));
        expected_begin = t.end_offset;
    }
    const std::uint64_t data = file_bytes - kSafetensorsLengthPrefixBytes - n;
    if (expected_begin != data)
        fail(source, "MetadataIncompleteBuffer",
             "tensors cover " + std::to_string(expected_begin) + " bytes but the file holds " + std::to_string(data) + " after the header" +
                 (expected_begin > data ? " (truncated)" : " (trailing bytes)"));
    return h;
}

SafetensorsHeader read_safetensors_header(const std::filesystem::path& path) {
    const std::string source = path.string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(source, "not a regular file");
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) throw Error(source, "cannot read: " + ec.message());
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(source, "cannot open");
    std::string prefix(static_cast<std::size_t>(std::min<std::uintmax_t>(size, kSafetensorsLengthPrefixBytes)), '\0');
    in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
    if (static_cast<std::size_t>(in.gcount()) != prefix.size()) throw Error(source, "cannot read the header length");
    if (prefix.size() == kSafetensorsLengthPrefixBytes) {
        std::uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
        // Only a header that passes both bounds is read; the parser reports the others.
        if (n <= kSafetensorsMaxHeaderBytes && n <= size - kSafetensorsLengthPrefixBytes) {
            prefix.resize(static_cast<std::size_t>(kSafetensorsLengthPrefixBytes + n));
            in.read(prefix.data() + kSafetensorsLengthPrefixBytes, static_cast<std::streamsize>(n));
            prefix.resize(static_cast<std::size_t>(kSafetensorsLengthPrefixBytes) + static_cast<std::size_t>(in.gcount()));
        }
    }
    return parse_safetensors_header(prefix, size, source);
}

std::string encode_safetensors(const std::vector<SafetensorsEntry>& tensors, const std::map<std::string, std::string>& metadata) {
    std::vector<const SafetensorsEntry*> order;
    std::set<std::string> names;
    for (const SafetensorsEntry& t : tensors) {
        if (t.name == "__metadata__" || !names.insert(t.name).second) throw Error("safetensors writer", "duplicate or reserved tensor name '" + t.name + "'");
        order.push_back(&t);
    }
    // The official writer: dtype descending (widest alignment first), then name.
    std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
        return a->dtype != b->dtype ? a->dtype > b->dtype : a->name < b->name;
    });
    json header = json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> sizes;
    for (const SafetensorsEntry* t : order) {
        for (std::int64_t d : t->shape)
            if (d < 0) throw Error("safetensors writer", "negative dimension in '" + t->name + "'");
        const auto bits = checked_bits(t->shape, safetensors_dtype_traits(t->dtype).bits);
        if (!bits || *bits % 8 != 0) throw Error("safetensors writer", "size of '" + t->name + "' overflows or is not whole bytes");
        const std::uint64_t size = *bits / 8;
        if (!t->data.empty() && t->data.size() != size)
            throw Error("safetensors writer", "'" + t->name + "' has " + std::to_string(t->data.size()) + " bytes of data, needs " + std::to_string(size));
        header[t->name] = {{"dtype", std::string(safetensors_dtype_name(t->dtype))}, {"shape", t->shape}, {"data_offsets", {offset, offset + size}}};
        offset += size;
        sizes.push_back(size);
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::string out;
    out.reserve(static_cast<std::size_t>(kSafetensorsLengthPrefixBytes + text.size() + offset));
    std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
    out += text;
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (order[i]->data.empty()) out.append(static_cast<std::size_t>(sizes[i]), '\0');
        else out += order[i]->data;
    }
    return out;
}

}  // namespace quantplan
