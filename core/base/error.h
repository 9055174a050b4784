#pragma once
// The one error type core throws at its boundaries. It carries the field or JSON path that was
// wrong so that the command line can print a single line naming it.
#include <stdexcept>
#include <string>

namespace quantplan {

// An input that core refuses: a malformed config, an unknown scheme, an impossible size.
// `field` names what was wrong (a JSON path such as "config.json: hidden_size", or an option).
class Error : public std::runtime_error {
public:
    Error(std::string field, const std::string& message)
        : std::runtime_error(field.empty() ? message : field + ": " + message), field_(std::move(field)) {}

    // The field, option or JSON path that was wrong; may be empty.
    const std::string& field() const noexcept { return field_; }

private:
    std::string field_;
};

}  // namespace quantplan
