import DedogImage
import Foundation

/// Photos of the kind owners take of their own dogs, which the bundled backbones never learnt (issue 70): three of
/// amateur-pets, and a head close-up cut from a Stanford test photo. Every one is a dog of a breed both bundled
/// models know, and each answers it as that breed.
public enum OwnersPhotos {
    /// A Saint Bernard puppy sitting small on a beach: the default model's whole photo holds it back as "a breed this
    /// model does not know" (the breed at 75 %, its cosine to the breed's prototype 0.52, far under the rule's line);
    /// the dog's own look names it at 99.6 % (95 % needed).
    public static let puppy = (url: SharedData.amateurPets.appendingPathComponent("n02109525-Saint_Bernard/saint_bernard_129.jpg"),
                               key: "n02109525-Saint_Bernard")
    /// A pug chewing a tennis ball, and a Samoyed puppy in the snow: the default model's ImageNet heads put only 0.267
    /// and 0.272 of their mass on dogs (its "no dog" line is 0.30), the detector finds each dog and the breed head is
    /// sure of it (99.8 %, 99.9 %); the seen-dog rule (from a share of 0.261) keeps them dogs. The same on every
    /// kernel set (the 8-bit layers compute the same bytes on each).
    public static let ball = (url: SharedData.amateurPets.appendingPathComponent("n02110958-pug/pug_127.jpg"), key: "n02110958-pug")
    public static let snow = (url: SharedData.amateurPets.appendingPathComponent("n02111889-Samoyed/samoyed_14.jpg"),
                              key: "n02111889-Samoyed")

    /// A Doberman's head and neck: the upper half of the dog's box of a Stanford test photo restored to its proportions
    /// (400 pixels high), the dog cut off by the frame at the chest. Both models name it at 99.7 % or more.
    public static func headCloseUp() throws -> (image: RGBImage, key: String) {
        let (photo, boxes) = try DogPhotos.restored("n02107142-Doberman/n02107142_12076.jpg", height: 400)
        let box = boxes[0]
        return (try photo.cropped(left: box.x, top: box.y, width: box.width, height: box.height / 2), "n02107142-Doberman")
    }
}
