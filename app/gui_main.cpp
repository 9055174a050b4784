#include "app/commands.h"

namespace quantplan::app {

// Replaced by the Qt planner window when the GUI is built (ui/).
bool gui_available() { return false; }

int run_gui(int, char**, const CliOptions&) { return 2; }

}  // namespace quantplan::app
