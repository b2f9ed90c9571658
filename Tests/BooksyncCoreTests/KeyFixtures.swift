/// Keys for the parser and signature tests, made once with openssl and
/// ssh-keygen (commands beside each). They sign nothing outside the tests.
enum KeyFixtures {
    /// The RFC 7515 A.2 key (its JWK n, e, d, p, q, dp, dq, qi) written as PKCS#8 DER by a few lines of
    /// Python; `openssl pkey -check` accepts it and `openssl dgst -sha256 -sign` with it gives the RFC's signature.
    static let rfc7515PKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCh+BYK4uPJtGXO
        jS1lYmM2K5J9vinh8CR3/BYlzJChNuOL2TSXxbbqY913EeZ8dCn5VrD7io8ImtxL
        aYk8wTM/U+3QGbh3hCUv7JFP5IV3aVlL6kKA0ywPVb9ilE8TA5a8bpvfbr3SvaNn
        juygxmj3AbONv/s4yDQs4v5tJ/reSlpIdJed1LnPmt7Ex1sFhSwsD174pcF1A5L5
        ROjtZMEQxrZHYJqkeDrrnGya11UxMFBji4NmXG9veoKjlnAqH2QbgtPr8jkiGUkf
        toaHLFcW9Qr4NY2ai50Xw0Byj3+H2JoY2PyrZ62EWQwuz3WTOTY8BwNNb2BvniHg
        VFbK5emhAgMBAAECggEAEq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyW
        PEAeP88vLNO97IjlA7/GQ5sLKMgvfTeXZx9SE+7YwVol2NXOoAJe46sui395IW/G
        O+pWJ1O0BkTGoVEn2bKVRUCgu+GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzj
        kn439X0M/V51gfpRLI9JYanrC4D4qAdGcopV/0ZHHzQlBjudU2QvXt4ehNYTCBr6
        XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl/x/jTj3ccPDVZFD9pIuhLhBOneufuBiB
        4cS98l2SR/RQyGWSeWjnczT0QU91p1DhOVRuOopznQKBgQDgHMQQ60imZV1URk0K
        pLttoLhyt3SmqdEf/kgHePDdtzEafpAu+cS191R2JiuoF2yzWXnwFDcqGigp5BNr
        0AHQfD8/Lk8l1Mk09jxxCfui5nYooNyac8YFjm3vItzVCVDnEd3BbVWG8qf6deqE
        lMGAg+C2V0L4oNXnP7LZcPAZRwKBgQC5A8R+CZW2MvRTLLHzwZkUXV866cff7tx6
        kqa0finGG0KgeqlaZPxgCZnFp7AeAcCMtiynVlJ7vMVgePsLq6XtON4tB5kP9jAP
        rq3rbAOal78eUH5OcED6eNuCV8ixEu1eWcPNCS/l1OW1EnXUEoEHKl54Xrrz2uNw
        kgMTP1FZ1wKBgAcCn1dwJKufzBWQxWQp1vsM5fggqPN1qGb5y0MAk3g7/Ls5bkUp
        5u9SN0Ai3Ya6hNnvWJMb7sXQX6U/zyO2M/hTip7tUeh7CXgwo59dkpN75gJLVds2
        9+DAncu3KXU4f2Fa+7bLNrur53k8KwPOq2bbuTG69QtV7Jr5MR0AHWKNAoGBAIf/
        evpitUf+4JYbLpvNXWcY052Mpz22aR84mY3nh3F2LF2mjMJDpTg7FmuyPcVw6EcG
        yoAe9fa65iNqCq+jdw6PVNGo2hxfjSiZ8IIzHdsPXI89//pMjZcQK9r+CCoRjaZj
        OYiIDktVWZzmevJuv6WywUqd57LE3Zar3dLSIkx1AoGAIYd7DHOhrWvxkwPQsRM2
        tOgrjbcrfvtQJipd+DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd/QJQ3
        ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp/gh6A56
        03k2+ZQwVK0JKSHuLFkuQ3U=
        -----END PRIVATE KEY-----
        """

    /// The same key as PKCS#1 (`openssl rsa -traditional`).
    static let rfc7515PKCS1 = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIEowIBAAKCAQEAofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd/wWJcyQoTbji9k0
        l8W26mPddxHmfHQp+Vaw+4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL+yRT+SFd2lZS+pC
        gNMsD1W/YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb/7OMg0LOL+bSf63kpaSHSX
        ndS5z5rexMdbBYUsLA9e+KXBdQOS+UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uD
        Zlxvb3qCo5ZwKh9kG4LT6/I5IhlJH7aGhyxXFvUK+DWNmoudF8NAco9/h9iaGNj8
        q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQIDAQABAoIBABKucaRpzQorw35S
        bEUAVx8dYXUdZOlJcHtiWQ+dC6V8ljxAHj/PLyzTveyI5QO/xkObCyjIL303l2cf
        UhPu2MFaJdjVzqACXuOrLot/eSFvxjvqVidTtAZExqFRJ9mylUVAoLvhowVWmC1O
        n95fZCXxTUtxNEG1Xcc7m0rtzJKs45J+N/V9DP1edYH6USyPSWGp6wuA+KgHRnKK
        Vf9GRx80JQY7nVNkL17eHoTWEwga+lwi0FEoW9Y7lDtWXYmKBWhUE+U8PGxlJf8f
        40493HDw1WRQ/aSLoS4QTp3rn7gYgeHEvfJdkkf0UMhlknlo53M09EFPdadQ4TlU
        bjqKc50CgYEA4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH/5IB3jw3bcxGn6QLvnE
        tfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw/Py5PJdTJNPY8cQn7ouZ2KKDcmnPG
        BY5t7yLc1QlQ5xHdwW1VhvKn+nXqhJTBgIPgtldC+KDV5z+y2XDwGUcCgYEAuQPE
        fgmVtjL0Uyyx88GZFF1fOunH3+7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYs
        p1ZSe7zFYHj7C6ul7TjeLQeZD/YwD66t62wDmpe/HlB+TnBA+njbglfIsRLtXlnD
        zQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdcCgYAHAp9XcCSrn8wVkMVkKdb7
        DOX4IKjzdahm+ctDAJN4O/y7OW5FKebvUjdAIt2GuoTZ71iTG+7F0F+lP88jtjP4
        U4qe7VHoewl4MKOfXZKTe+YCS1XbNvfgwJ3Ltyl1OH9hWvu2yza7q+d5PCsDzqtm
        27kxuvULVeya+TEdAB1ijQKBgQCH/3r6YrVH/uCWGy6bzV1nGNOdjKc9tmkfOJmN
        54dxdixdpozCQ6U4OxZrsj3FcOhHBsqAHvX2uuYjagqvo3cOj1TRqNocX40omfCC
        Mx3bD1yPPf/6TI2XECva/ggqEY2mYzmIiA5LVVmc5nrybr+lssFKneeyxN2Wq93S
        0iJMdQKBgCGHewxzoa1r8ZMD0LETNrToK423K377UCYqXfg5XMclbrjPbEC3YI1Z
        NqMtuhdBJqUnBi6tjKMF+34Xf0CUN8ncuXGO2CAYvO8PdyCixHX52ybaDjy1FtCE
        6yUXjoKNXKvUm7MWGsAYH6f4IegOetN5NvmUMFStCSkh7ixZLkN1
        -----END RSA PRIVATE KEY-----
        """

    /// Its public key (`openssl pkey -pubout`).
    static let rfc7515Public = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAofgWCuLjybRlzo0tZWJj
        NiuSfb4p4fAkd/wWJcyQoTbji9k0l8W26mPddxHmfHQp+Vaw+4qPCJrcS2mJPMEz
        P1Pt0Bm4d4QlL+yRT+SFd2lZS+pCgNMsD1W/YpRPEwOWvG6b32690r2jZ47soMZo
        9wGzjb/7OMg0LOL+bSf63kpaSHSXndS5z5rexMdbBYUsLA9e+KXBdQOS+UTo7WTB
        EMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6/I5IhlJH7aGhyxX
        FvUK+DWNmoudF8NAco9/h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXp
        oQIDAQAB
        -----END PUBLIC KEY-----
        """

    /// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024`: too small.
    static let rsa1024 = """
        -----BEGIN PRIVATE KEY-----
        MIICeAIBADANBgkqhkiG9w0BAQEFAASCAmIwggJeAgEAAoGBANuQifex7hrRfSMj
        9nn1FTqjZWigOsLLYFSOkmCL5g8smR60y7wzmOYWUr/0v29kQxTXkDa890w9hK0n
        94X9rImT+511ZO4aJHlrnDqrlfQVTBY/3vRFmWHV/dI+UzbxQMTXH2M6QlSNLe9F
        oCvhMRA8e/knBQvG8xBBGtL/VSdhAgMBAAECgYEAkdsiy/jXQ9mGV6G8SqgUwi9p
        XmeSoXSZOZK8ioZk/g+SaGOSNCPSnoaV0g60XTstlNreYn6FiZAUYzL5q3ko88DW
        +vjGM9xOlbnlnsPJIBxWRVethsuDahCuQOuWfe2DBMjK/k2AgWmkZuCdc0POhfZD
        ANv1qVwdijsTiJa4kUECQQDyouNU39AUolsqxVCqNv/1oTMgUaATb9JTng1izVik
        FzZayfEX/WtPShJTknIlL8C6W217dFXFZiYeLdR4bp1rAkEA56hYkHjP6vZkk9kf
        A0zd41Kgnlvxu16XMzOKX8KXDpdunbwMeWWojAn2sd0P0CDdc5XrW9atbx3b+SqA
        xY2VYwJBAL+zSE8vgZQ77jGtsZy6VaJ42Q8IzqNsrs1Xy5WrTgRfPpeeg3iDxXvg
        tvgGdV7CCtByGd73PCj5GtavOPZp1r8CQE/sqhm2RO3o8ox8BZIq7AcpE9dvG3is
        yvfUWXJufZWAM57iKV+c7kjaiy2UeocxP5ZIbDp0V8QVhjZyLpl6HscCQQDwixjQ
        mAva7GdZzcSGvbpceTo0KnRyLx2p8kBCRMNgnXaMRDmdH+D5hH1gWPop/upoh/Xw
        XN1bmtFYAyjK1eV4
        -----END PRIVATE KEY-----
        """

    /// That key encrypted the traditional way (`openssl rsa -aes128 -traditional`).
    static let rsa1024Encrypted = """
        -----BEGIN RSA PRIVATE KEY-----
        Proc-Type: 4,ENCRYPTED
        DEK-Info: AES-128-CBC,19CA186EC6E2F7825148B8D14EA9C672
        
        cZb/yGSB2YLw2oAl+7uyGji7bMFjqacZpTAxnHBS3OLA7X/8Gu/VOdGPMYWHb0PR
        NKl7hcElb/iIDl2gvyFqYPLOLsrbhGiSRe+13QYukk5X0zXds9VePFTOT7Fa0Lws
        QSFuBYqjhx8bhAQS4HQaiYflYKcAq2Dy69/i3vpJI4ZhrpMPRQaqygA2yup57g3k
        8o/jr9WCoJ940lhXdW/lQLqlco1rURCZ316kC5udLJVvaiM6C+BRA1M15LxjAu2V
        fJE0oHngUn1Wf2Qwu+duRsUaEeaHnXT7+mq/Hv2BmIUuMePoslY6hAiGdquIfWtx
        KO8K7vha9IAzd/4bg9bWywuZFsoBn3qWqiKa5HYPic4DTNFrULpBlvJvtEQ9aIn2
        iJS+ioFrXI5vyFt6Oam/9uvzSc9+ac6X7jzL7f5LIzpZvZaX575TP+PIIPfI6KNg
        0QW1tjlkr9i6m7ikPIlHm88HjpBKWamG4oB0RE33c0ydntQ3ApTLwmf2pn0lsqhj
        ysD+FXmtprG+QJjZFyYsi74KLHe9BEIojVCxQil4Twi5SKi7rsBq2j4M7y6Ek3cG
        cJ8Lc68t4UOsxli1Dht5Nr/patfrB0u429Pv36yq3STXRcC4C2kOEpXk2CIVPhRU
        XQ5mEbLkxhDOesHbYSy16P913qGsm4ySDdcPYM9H6G2qcJi3VPbQf6ZUUHUSb5kZ
        8K6magXJhDOIcaW4UsYJ9WsA85tBChGrXmfjZMX+E1h3uP3zsNnFJn9P0+Wr4UI6
        pMp4QrdYTEzjW2REQQcdkz33ZTmLNt33kzmW3RJLjMT9U1IyO/mwlfdD+pvBA0H2
        -----END RSA PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm RSA-PSS` (1024 bits): an RSA key restricted to PSS.
    static let rsaPSS = """
        -----BEGIN PRIVATE KEY-----
        MIICdQIBADALBgkqhkiG9w0BAQoEggJhMIICXQIBAAKBgQDuP5Sec+slVWaXJ2Yz
        LdmSALiNybSp/1teHFOWFWLvmjZQHYCG0d5yrPzd3avRbu80jEsRWYcjw8D+v+3l
        lhASxl0nrBOyXLm/6ATbvtF0hNCLPGj6jkl3bY824qR3PfYkWVpT5ZkEwFAz7es+
        VHtoINTN/jnEHkLZy7Yud8sovwIDAQABAoGANb+QRsL9/JksoNMZolgoqmCRQiOM
        J4HdWfjn/obqoAVZVW+ibEfyeEqAbYkx1vjA7EjuMobRDwd9hbtE7zOQgkxR2dJ9
        f4CC8VG5TkrbwJ4iMgPxUrXajUyytIXjJqTQ6Jvprw4N3+b032/BPl55C6QxQ6s3
        EhhfflueSPwH5gECQQD/UWrQr6MJDF+4IqItqn30yURDwClWROZohu0pfw7p+UI1
        f9JWMN8VeZ9LaqJ1p5rMMUQgkAtjm444bXPlJi0BAkEA7uJ9xeo3Jp3HKgmq9YaM
        1xMQ6XftF7iahWwAFxokyI8ibuQZXS18Nbl3sNg4R8P0/qwYL4PHho9sNj2EAh6V
        vwJBAL4hP04QvXRrhox1HhirsgisKO3bF+1qebq1X79bIxwRxsBYY6ZT1o0DeSCM
        VFcRbTFKLtWg7xpKKOrUd03Z1AECQQDhVvunv3mIztq59+axttuSYmTYpw0bDEOO
        ykMHh9zc59BmZHrcn3SExVB3nG7ym5G2zqX95ERJ1W8Rd1PYH/vHAkACi9IySsAM
        jrrbWpfLBDyl2CaS5P+EegEmh9MZCHNMrUYsYA4qAMdBKLMBhw5yPOTMWXZ07CT1
        B191dh+anH97
        -----END PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
    static let ecPKCS8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZlc3iUKxYZsYFynL
        xVH2CiD7KkDU+GHh0uqvg3F2aXShRANCAAQZCoWt0iKBNkzu06Vze5WTgCQPAobm
        AiuxaI/Vvful8KmmkXu5TiobfgXPB+KOTtvUg/s9WNhSkJ1YJf9tV4Qs
        -----END PRIVATE KEY-----
        """

    /// The same EC key as SEC 1 (`openssl ec`).
    static let ecSEC1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIGZXN4lCsWGbGBcpy8VR9gog+ypA1Phh4dLqr4Nxdml0oAoGCCqGSM49
        AwEHoUQDQgAEGQqFrdIigTZM7tOlc3uVk4AkDwKG5gIrsWiP1b37pfCpppF7uU4q
        G34Fzwfijk7b1IP7PVjYUpCdWCX/bVeELA==
        -----END EC PRIVATE KEY-----
        """

    /// The EC key encrypted as PKCS#8 (`openssl pkcs8 -topk8 -v2 aes256`).
    static let ecEncrypted = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAj2tsLoAmUFkwICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEJCkcPdm2YYdqAc9yVditXcEgZDa
        /OGwfA0fcL+Sduod3FSmIZYiPb7e2tTh74At+XIxH/ekeeNxHZHqi2rwYFLgEGvT
        J+Pwwqjc7zdyXTKWqe15cotKcjLOpfOspHUEYXRrjUUHf6CUJyuCP92TIuFPBxWj
        A66JvFJzr/z7JGLjfpsJznZcKSXJZ6rmfLkFYjVvqpw+ZK0+ceGbeX9uMaIv/wg=
        -----END ENCRYPTED PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm ED25519`.
    static let ed25519 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEICRoiA+03pANBVAEhxFZ6rg89j5zwczx/VFfA7yMxcOI
        -----END PRIVATE KEY-----
        """

    /// `ssh-keygen -t ed25519 -N ''`.
    static let openSSH = """
        -----BEGIN OPENSSH PRIVATE KEY-----
        b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
        QyNTUxOQAAACD3gr+an4a3/OMGWsH8KYwcxHHW9OtIH9RfahdyTFnCpwAAAIj+qjn//qo5
        /wAAAAtzc2gtZWQyNTUxOQAAACD3gr+an4a3/OMGWsH8KYwcxHHW9OtIH9RfahdyTFnCpw
        AAAEBWg/o6vTjBr7B5bZ9pywfK38EF7JJtHiXVC4t8TFqXh/eCv5qfhrf84wZawfwpjBzE
        cdb060gf1F9qF3JMWcKnAAAAAAECAwQF
        -----END OPENSSH PRIVATE KEY-----
        """
}
