import DedogFiles

// The catalogue read straight from parsed JSON, without `Codable`: `JSONDecoder` took 11–15 ms for the bundled
// 420 kB catalogue, which `dedog classify` reads beside the model on a 2-core machine, and every `dedog breeds`
// command waits for. As for model descriptions (DedogNN's ModelDescription+Quick.swift), this reads only what it can
// read exactly as `Codable` would, gives nil on anything else (a required field missing or null, another type, an
// integer written with a fraction), and the catalogue is then decoded with `Codable`, whose errors name the field.
// `CatalogueQuickTests` checks that both read the bundled catalogue and altered ones alike.

extension Catalogue {
    /// The catalogue file read the quick way; nil where that leaves the reading to `Codable`.
    static func quickly(_ bytes: UnsafeRawBufferPointer) -> File? {
        guard let value = try? JSONValue.parse(bytes), let o = value.object, let version = o["formatVersion"]?.int,
              let sources = o["sources"]?.list(Source.init(quickly:)),
              let vocabulary = JSONValue.optional(o["vocabulary"], { $0.map { $0.map(\.string) } }),
              let breeds = o["breeds"]?.list(Breed.init(quickly:)) else { return nil }
        return File(formatVersion: version, sources: sources, vocabulary: vocabulary, breeds: breeds)
    }
}

extension Breed {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let id = o["id"]?.string, let labels = o["labels"]?.list(\.string),
              let name = o["name"].flatMap(Names.init(quickly:)), let aliases = o["aliases"].flatMap(Aliases.init(quickly:)),
              let fci = JSONValue.optional(o["fci"], FCI.init(quickly:)), let fciNote = JSONValue.optional(o["fciNote"], \.string),
              let origin = JSONValue.optional(o["origin"], \.string), let size = JSONValue.optional(o["size"], \.string),
              let height = JSONValue.optional(o["height"], Measure.init(quickly:)), let weight = JSONValue.optional(o["weight"], Measure.init(quickly:)),
              let lifeSpan = JSONValue.optional(o["lifeSpan"], Range.init(quickly:)), let coat = JSONValue.optional(o["coat"], Coat.init(quickly:)),
              let colours = o["colours"]?.list(\.string), let temperament = o["temperament"]?.list(\.string),
              let sources = o["sources"]?.list(SourceUse.init(quickly:)),
              let bundled = o["bundledModel"]?.bool else { return nil }
        self.init(id: id, labels: labels, name: name, aliases: aliases, fci: fci, fciNote: fciNote, origin: origin, size: size,
                  height: height, weight: weight, lifeSpan: lifeSpan, coat: coat, colours: colours, temperament: temperament,
                  sources: sources, bundledModel: bundled)
    }
}

extension Breed.Names {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let en = o["en"]?.string, let cs = JSONValue.optional(o["cs"], \.string) else { return nil }
        self.init(en: en, cs: cs)
    }
}

extension Breed.Aliases {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let en = o["en"]?.list(\.string), let cs = o["cs"]?.list(\.string) else { return nil }
        self.init(en: en, cs: cs)
    }
}

extension Breed.FCI {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let number = o["number"]?.int, let group = o["group"]?.int,
              let groupName = o["groupName"]?.string, let section = JSONValue.optional(o["section"], \.string),
              let provisional = o["provisional"]?.bool, let variety = JSONValue.optional(o["variety"], \.string) else { return nil }
        self.init(number: number, group: group, groupName: groupName, section: section, provisional: provisional,
                  variety: variety)
    }
}

extension Breed.Range {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let min = o["min"]?.double, let max = o["max"]?.double, let unit = o["unit"]?.string
        else { return nil }
        self.init(min: min, max: max, unit: unit)
    }
}

extension Breed.Measure {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let min = o["min"]?.double, let max = o["max"]?.double, let unit = o["unit"]?.string,
              let male = JSONValue.optional(o["male"], Breed.Range.init(quickly:)),
              let female = JSONValue.optional(o["female"], Breed.Range.init(quickly:)) else { return nil }
        self.init(min: min, max: max, unit: unit, male: male, female: female)
    }
}

extension Breed.Coat {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let grooming = JSONValue.optional(o["grooming"], \.string),
              let shedding = JSONValue.optional(o["shedding"], \.string) else { return nil }
        self.init(grooming: grooming, shedding: shedding)
    }
}

extension Breed.SourceUse {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let source = o["source"]?.string, let fields = o["fields"]?.list(\.string)
        else { return nil }
        self.init(source: source, fields: fields)
    }
}

extension Source {
    init?(quickly value: JSONValue) {
        guard let o = value.object, let id = o["id"]?.string, let title = o["title"]?.string,
              let repository = o["repository"]?.string, let commit = o["commit"]?.string, let path = o["path"]?.string,
              let licence = o["licence"]?.string else { return nil }
        self.init(id: id, title: title, repository: repository, commit: commit, path: path, licence: licence)
    }
}
