// quantplan: the GUI by default, --headless for the command line. The mode is decided before
// anything is built: --help, --version and every headless path run without a QApplication.
#include <exception>
#include <iostream>

#include "app/cli_options.h"
#include "app/commands.h"
#include "app/headless.h"
#include "core/base/error.h"

int main(int argc, char** argv) {
    using namespace quantplan;
    app::CliOptions options;
    try {
        options = app::parse_command_line(argc, argv);
    } catch (const Error& e) {
        std::cerr << "quantplan: " << e.what() << "\n";
        return 1;
    }
    if (options.help) {
        std::cout << app::help_text();
        return 0;
    }
    if (options.version) {
        std::cout << app::version_text() << "\n";
        return 0;
    }
    try {
        if (options.emit_engine || options.emit_out) return app::run_emit(options, std::cout, std::cerr);
        if (options.check_path) return app::run_check(options, std::cout, std::cerr);
        if (options.check_corpus) return app::run_check_corpus(options, std::cout, std::cerr);
        // --serve with --out DIR writes the report, whose capacity section is --serve's planning.
        if (options.serve && !(options.out_dir && *options.out_dir != "-")) return app::run_serve(options, std::cout, std::cerr);
        if (options.fit_engines) return app::run_fit_engines(options, std::cout, std::cerr);
        if (options.fit_serving) return app::run_fit_serving(options, std::cout, std::cerr);
        if (options.fit_spec) return app::run_fit_spec(options, std::cout, std::cerr);
        if (options.fit_disagg) return app::run_fit_disagg(options, std::cout, std::cerr);
        if (options.validate) return app::run_validate(options, std::cout, std::cerr);
        if (options.inspect_path) return app::run_inspect(options, std::cout, std::cerr);
        if (options.out_dir && *options.out_dir != "-") return app::run_report(options, std::cout, std::cerr);
        if (!options.headless && app::gui_available()) return app::run_gui(argc, argv, options);
        return app::run_headless(options, std::cout, std::cerr);
    } catch (const std::exception& e) {
        std::cerr << "quantplan: internal error: " << e.what() << "\n";
        return 2;
    }
}
