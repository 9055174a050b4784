#pragma once
// The words the window uses, defined once: every control, column header and axis tooltip takes
// its text from here, so a term reads the same wherever it appears.
#include <QtCore/QString>

namespace quantplan::ui {

// The definition of `term` (a key such as "effective_bits", "batch", "ridge"), as one or two
// sentences for a tooltip; an empty string for an unknown key (tests check every key used).
QString glossary(const char* term);

// Every key glossary() defines (tests: each has a non-empty definition).
const char* const* glossary_keys(int* count);

}  // namespace quantplan::ui
