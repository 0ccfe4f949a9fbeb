// The run report's page (report.html), built into the library by CMake
// (report_template.cpp.in) so the binary needs no asset files at run time.
#pragma once

namespace strata::train {

extern const char kReportTemplate[];

}  // namespace strata::train
