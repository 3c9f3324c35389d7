// Documentation/Plugins.md, "Using plugins in an app". CourierExampleTests checks that Plugins.md shows
// this code verbatim and runs it as Plugins.md does, on the plugins installed as Plugins.md says.
import Foundation
import Courier

let arguments = CommandLine.arguments                            // LoadPlugins DIRECTORY URL
let report = CourierPlugins.load(directory: URL(fileURLWithPath: arguments[1]))
for plugin in report.loaded { print("loaded", plugin) }          // name, version, schemes, library
for failure in report.failures { print("refused", failure) }     // "<file>: <reason>"

let (data, _) = try await URLSession.shared.data(from: URL(string: arguments[2])!)
print(String(decoding: data, as: UTF8.self))
