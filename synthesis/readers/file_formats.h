// The readers of each file format, called by ReadMeasurementFiles once the format is detected.
// Each appends the records it read to out->records and what it skipped to out->skipped.
// Internal to readers/.
#ifndef BENCHFLEET_SYNTHESIS_READERS_FILE_FORMATS_H_
#define BENCHFLEET_SYNTHESIS_READERS_FILE_FORMATS_H_

#include <string>
#include <string_view>

#include "synthesis/readers/measurement_files.h"

namespace benchfleet::synthesis {

// llama-bench -o json (array) or -o jsonl (one object per line): one record per sample.
void ReadLlamaBenchJson(const std::string& path, std::string_view content, ReadResult* out);
// llama-bench -o csv: one record per row, the mean only (the CSV has no samples).
void ReadLlamaBenchCsv(const std::string& path, std::string_view content, ReadResult* out);
// ComfyUI server log: one record per "Prompt executed in X seconds" line.
void ReadComfyUiLog(const std::string& path, std::string_view content, ReadResult* out);
// llama-server log: one record per request's print_timing lines, buffer sizes on the first.
void ReadLlamaServerLog(const std::string& path, std::string_view content, ReadResult* out);
// The generic CSV of README.md: one record per row.
void ReadGenericCsv(const std::string& path, std::string_view content, ReadResult* out);

inline constexpr char kGenericCsvHeader[] =
    "machine,task,backend,mode,phase,call_index,wall_seconds,metric,value,unit,status";

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_READERS_FILE_FORMATS_H_
