// Command-line values of the form PATH[:NUMBER[:NUMBER...]] (--image FILE:FRAME:STRENGTH:CRF, --video
// FILE:STRENGTH): trailing fields are peeled off only while they parse as numbers, so a path may hold colons.
#pragma once

#include <string>
#include <vector>

namespace ltx {

struct PathFields {
  std::string path;
  std::vector<std::string> fields;  // the numeric fields, in order
  std::vector<double> values;       // their values
};

// At most `max_fields` numeric fields are taken from the end.
PathFields split_path_fields(const std::string& argument, int max_fields);

}  // namespace ltx
