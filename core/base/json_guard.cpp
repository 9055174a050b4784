#include "core/base/json_guard.h"

#include <cctype>

#include <unordered_set>

#include "core/base/error.h"

namespace quantplan {
namespace {

using nlohmann::json;

// Thrown from the parser callback to stop a parse early; turned into Error below.
struct StopParse {
    std::string message;
};

}  // namespace

std::string clip_text(std::string_view text, std::size_t max_chars) {
    if (text.size() <= max_chars) return std::string(text);
    return std::string(text.substr(0, max_chars)) + "...";
}

bool is_valid_utf8(std::string_view s) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i < len) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Overlong encodings, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
        if (cp >= 0xD800 && cp <= 0xDFFF) return false;
        if (cp > 0x10FFFF) return false;
        i += len;
    }
    return true;
}

namespace {

template <typename Json>
Json parse_guarded(std::string_view text, const std::string& source, bool reject_duplicate_root_keys, int max_depth) {
    std::unordered_set<std::string> root_keys;
    const typename Json::parser_callback_t guard = [&](int depth, typename Json::parse_event_t event, Json& parsed) -> bool {
        if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) && depth >= max_depth)
            throw StopParse{"nests deeper than " + std::to_string(max_depth) + " levels"};
        if (reject_duplicate_root_keys && event == Json::parse_event_t::key && depth == 1) {
            const std::string& key = parsed.template get_ref<const std::string&>();
            if (!root_keys.insert(key).second) throw StopParse{"names '" + clip_text(key) + "' twice"};
        }
        return true;
    };
    // nlohmann's lexer takes a NUL byte for the end of the input and would ignore what follows; JSON
    // has no place for a raw NUL, and the official loader rejects it.
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw Error(source, "not valid JSON (a NUL byte at offset " + std::to_string(nul) + ")");
    try {
        return Json::parse(text.begin(), text.end(), guard);
    } catch (const StopParse& stop) {
        throw Error(source, "JSON " + stop.message);
    } catch (const nlohmann::json::exception& e) {
        throw Error(source, "not valid JSON (" + clip_text(e.what()) + ")");
    }
}

}  // namespace

json parse_untrusted_json(std::string_view text, const std::string& source, bool reject_duplicate_root_keys, int max_depth) {
    return parse_guarded<json>(text, source, reject_duplicate_root_keys, max_depth);
}

nlohmann::ordered_json parse_untrusted_ordered_json(std::string_view text, const std::string& source, int max_depth) {
    return parse_guarded<nlohmann::ordered_json>(text, source, false, max_depth);
}

std::string null_python_literals(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) out += text[++i];
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
            out += c;
            continue;
        }
        const auto word = [&](std::string_view w) { return text.substr(i, w.size()) == w; };
        const auto boundary = [&](std::size_t end) {
            return end >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
        };
        if (word("-Infinity") && boundary(i + 9)) {
            out += "null";
            i += 8;
        } else if (word("Infinity") && boundary(i + 8)) {
            out += "null";
            i += 7;
        } else if (word("NaN") && boundary(i + 3)) {
            out += "null";
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace quantplan
