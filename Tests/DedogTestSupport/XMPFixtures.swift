/// XMP sidecars the tests of `dedog tag` start from.
public enum XMPFixtures {
    /// A sidecar as darktable writes it (abridged from a darktable 4 sidecar): its edit history, and the user's
    /// own keywords in dc:subject and lr:hierarchicalSubject.
    public static let darktableSidecar = """
        <?xml version="1.0" encoding="UTF-8"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="XMP Core 4.4.0-Exiv2">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:darktable="http://darktable.sf.net/"
            xmlns:dc="http://purl.org/dc/elements/1.1/"
            xmlns:lr="http://ns.adobe.com/lightroom/1.0/"
           darktable:xmp_version="5"
           darktable:history_end="2">
           <darktable:history>
            <rdf:Seq>
             <rdf:li darktable:num="0" darktable:operation="exposure" darktable:enabled="1" darktable:params="0000000000000000"/>
             <rdf:li darktable:num="1" darktable:operation="colorin" darktable:enabled="1" darktable:params="gz48eJxjZBgFo2AU"/>
            </rdf:Seq>
           </darktable:history>
           <dc:subject>
            <rdf:Bag>
             <rdf:li>holiday</rdf:li>
             <rdf:li>Beagle</rdf:li>
            </rdf:Bag>
           </dc:subject>
           <lr:hierarchicalSubject>
            <rdf:Bag>
             <rdf:li>Places|Šumava</rdf:li>
            </rdf:Bag>
           </lr:hierarchicalSubject>
          </rdf:Description>
         </rdf:RDF>
        </x:xmpmeta>
        """
}
