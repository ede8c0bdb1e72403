#include "common/hashing.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

TEST(HashingTest, Sha256OfKnownInputs) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashingTest, Sha256OfTheNistVectors) {
  // FIPS 180-4 examples: two blocks, a padding that needs a block of its own, a long message.
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(HashingTest, NewUuidIsVersion4AndUnique) {
  std::string a = NewUuid(), b = NewUuid();
  EXPECT_TRUE(IsUuid(a));
  EXPECT_NE(a, b);
  EXPECT_EQ(a[14], '4');
  EXPECT_NE(std::string("89ab").find(a[19]), std::string::npos);
}

TEST(HashingTest, IsUuidRejectsNearMisses) {
  EXPECT_TRUE(IsUuid("123e4567-e89b-42d3-a456-426614174000"));
  EXPECT_FALSE(IsUuid("123e4567e89b42d3a456426614174000"));
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456-42661417400g"));
  EXPECT_FALSE(IsUuid(""));
}

}  // namespace
}  // namespace benchfleet
