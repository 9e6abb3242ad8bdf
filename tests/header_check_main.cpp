// SPDX-License-Identifier: Apache-2.0
// Links the generated one-header translation units: the test passes when every public header compiled alone.
int main() { return 0; }
