import DedogFiles

// The catalogue read straight from its bytes, without `Codable` and without a tree of JSON values: `JSONDecoder`
// took 11–15 ms for the bundled 420 kB catalogue, which `dedog classify` reads beside the model on a 2-core machine,
// and every `dedog breeds` command waits for; a `JSONValue` tree then took 5–7 ms, most of it making and freeing a
// dictionary per object. This reads only what it can read exactly as `Codable` would and gives nil on anything else
// (a required field missing or null, another type, an integer written with a fraction, a key twice), and the
// catalogue is then decoded with `Codable`, whose errors name the field. Keys it does not know are passed over, as
// `Codable` ignores them. `CatalogueQuickTests` checks that both read the bundled catalogue and altered ones alike.

extension Catalogue {
    /// The catalogue file read the quick way; nil where that leaves the reading to `Codable`.
    static func quickly(_ bytes: UnsafeRawBufferPointer) -> File? {
        try? JSONReader.read(bytes) { r throws(JSONError) -> File in
            var version: Int?, sources: [Source]?, vocabulary: [String: [String: String]]?, breeds: [Breed]?
            try r.object { r, key throws(JSONError) in
                switch key {
                case "formatVersion": version = try r.int()
                case "sources": sources = try r.array(Source.init(reading:))
                case "vocabulary": vocabulary = try r.optional { r throws(JSONError) in try r.dictionary { r throws(JSONError) in try r.dictionary { r throws(JSONError) in try r.string() } } }
                case "breeds": breeds = try r.array(Breed.init(reading:))
                default: try r.skip()
                }
            }
            guard let version, let sources, let breeds else { throw Quick.missing }
            return File(formatVersion: version, sources: sources, vocabulary: vocabulary, breeds: breeds)
        }
    }
}

/// What ends a quick reading that leaves the catalogue to `Codable` (which then says what is wrong).
private enum Quick {
    static let missing = JSONError(offset: 0, reason: "a required field is missing")
}

private func required<T>(_ value: T?) throws(JSONError) -> T {
    guard let value else { throw Quick.missing }
    return value
}

private func strings(_ r: inout JSONReader) throws(JSONError) -> [String] {
    try r.array { r throws(JSONError) in try r.string() }
}

extension Breed {
    init(reading r: inout JSONReader) throws(JSONError) {
        var id: String?, labels: [String]?, name: Names?, aliases: Aliases?, fci: FCI?, fciNote: String?, origin: String?
        var size: String?, height: Measure?, weight: Measure?, lifeSpan: Range?, coat: Coat?, colours: [String]?
        var temperament: [String]?, sources: [SourceUse]?, bundled: Bool?, cross: Cross?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "id": id = try r.string()
            case "labels": labels = try strings(&r)
            case "name": name = try Names(reading: &r)
            case "aliases": aliases = try Aliases(reading: &r)
            case "fci": fci = try r.optional(FCI.init(reading:))
            case "fciNote": fciNote = try r.optional { r throws(JSONError) in try r.string() }
            case "origin": origin = try r.optional { r throws(JSONError) in try r.string() }
            case "size": size = try r.optional { r throws(JSONError) in try r.string() }
            case "height": height = try r.optional(Measure.init(reading:))
            case "weight": weight = try r.optional(Measure.init(reading:))
            case "lifeSpan": lifeSpan = try r.optional(Range.init(reading:))
            case "coat": coat = try r.optional(Coat.init(reading:))
            case "colours": colours = try strings(&r)
            case "temperament": temperament = try strings(&r)
            case "sources": sources = try r.array(SourceUse.init(reading:))
            case "bundledModel": bundled = try r.bool()
            case "cross": cross = try r.optional(Cross.init(reading:))
            default: try r.skip()
            }
        }
        self.init(id: try required(id), labels: try required(labels), name: try required(name), aliases: try required(aliases),
                  fci: fci, fciNote: fciNote, origin: origin, size: size, height: height, weight: weight, lifeSpan: lifeSpan,
                  coat: coat, colours: try required(colours), temperament: try required(temperament),
                  sources: try required(sources), bundledModel: try required(bundled), cross: cross)
    }
}

extension Breed.Names {
    init(reading r: inout JSONReader) throws(JSONError) {
        var en: String?, cs: String?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "en": en = try r.string()
            case "cs": cs = try r.optional { r throws(JSONError) in try r.string() }
            default: try r.skip()
            }
        }
        self.init(en: try required(en), cs: cs)
    }
}

extension Breed.Aliases {
    init(reading r: inout JSONReader) throws(JSONError) {
        var en: [String]?, cs: [String]?, fci: [String]?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "en": en = try strings(&r)
            case "cs": cs = try strings(&r)
            case "fci": fci = try strings(&r)
            default: try r.skip()
            }
        }
        self.init(en: try required(en), cs: try required(cs), fci: fci ?? [])
    }
}

extension Breed.Cross {
    init(reading r: inout JSONReader) throws(JSONError) {
        var parents: [Parent]?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "parents": parents = try r.array(Parent.init(reading:))
            default: try r.skip()
            }
        }
        self.init(parents: try required(parents))
    }
}

extension Breed.Cross.Parent {
    init(reading r: inout JSONReader) throws(JSONError) {
        var name: Breed.Names?, breeds: [String]?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "name": name = try Breed.Names(reading: &r)
            case "breeds": breeds = try strings(&r)
            default: try r.skip()
            }
        }
        self.init(name: try required(name), breeds: try required(breeds))
    }
}

extension Breed.FCI {
    init(reading r: inout JSONReader) throws(JSONError) {
        var number: Int?, group: Int?, groupName: String?, section: String?, provisional: Bool?, variety: String?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "number": number = try r.int()
            case "group": group = try r.int()
            case "groupName": groupName = try r.string()
            case "section": section = try r.optional { r throws(JSONError) in try r.string() }
            case "provisional": provisional = try r.bool()
            case "variety": variety = try r.optional { r throws(JSONError) in try r.string() }
            default: try r.skip()
            }
        }
        self.init(number: try required(number), group: try required(group), groupName: try required(groupName),
                  section: section, provisional: try required(provisional), variety: variety)
    }
}

extension Breed.Range {
    init(reading r: inout JSONReader) throws(JSONError) {
        var min: Double?, max: Double?, unit: String?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "min": min = try r.double()
            case "max": max = try r.double()
            case "unit": unit = try r.string()
            default: try r.skip()
            }
        }
        self.init(min: try required(min), max: try required(max), unit: try required(unit))
    }
}

extension Breed.Measure {
    init(reading r: inout JSONReader) throws(JSONError) {
        var min: Double?, max: Double?, unit: String?, male: Breed.Range?, female: Breed.Range?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "min": min = try r.double()
            case "max": max = try r.double()
            case "unit": unit = try r.string()
            case "male": male = try r.optional(Breed.Range.init(reading:))
            case "female": female = try r.optional(Breed.Range.init(reading:))
            default: try r.skip()
            }
        }
        self.init(min: try required(min), max: try required(max), unit: try required(unit), male: male, female: female)
    }
}

extension Breed.Coat {
    init(reading r: inout JSONReader) throws(JSONError) {
        var grooming: String?, shedding: String?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "grooming": grooming = try r.optional { r throws(JSONError) in try r.string() }
            case "shedding": shedding = try r.optional { r throws(JSONError) in try r.string() }
            default: try r.skip()
            }
        }
        self.init(grooming: grooming, shedding: shedding)
    }
}

extension Breed.SourceUse {
    init(reading r: inout JSONReader) throws(JSONError) {
        var source: String?, fields: [String]?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "source": source = try r.string()
            case "fields": fields = try strings(&r)
            default: try r.skip()
            }
        }
        self.init(source: try required(source), fields: try required(fields))
    }
}

extension Source {
    init(reading r: inout JSONReader) throws(JSONError) {
        var id: String?, title: String?, repository: String?, commit: String?, path: String?, licence: String?
        try r.object { r, key throws(JSONError) in
            switch key {
            case "id": id = try r.string()
            case "title": title = try r.string()
            case "repository": repository = try r.string()
            case "commit": commit = try r.string()
            case "path": path = try r.string()
            case "licence": licence = try r.string()
            default: try r.skip()
            }
        }
        self.init(id: try required(id), title: try required(title), repository: try required(repository),
                  commit: try required(commit), path: try required(path), licence: try required(licence))
    }
}
